// Whether a control-channel listener must use CURVE: on by default for every listen address
// other than loopback.
//
// Local endpoints are tcp:// on a loopback address (127.0.0.0/8, [::1], localhost), ipc:// and
// inproc://. Everything else requires CURVE, including tcp://*:port, tcp://0.0.0.0:port, interface
// names, hostnames and every other transport, and anything that does not parse. There is no way
// to turn CURVE off for a non-local listener; CurvePolicy::kAlways turns it on for local ones too.
//
//   if (CurveRequired("tcp://*:5555", CurvePolicy::kUnlessLocal)) Configure(socket, keys);  // true
//   CurveRequired("tcp://127.0.0.1:5555", CurvePolicy::kUnlessLocal);                      // false
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_SECURITY_LISTEN_POLICY_H_
#define COHORT_RUNTIME_SECURITY_LISTEN_POLICY_H_

#include "absl/strings/string_view.h"

namespace cohort {

enum class CurvePolicy {
  kUnlessLocal,  // the default: CURVE on every listener but local ones
  kAlways,       // CURVE on every listener, local ones included
};

// Whether only this machine can reach a listener bound to `endpoint` (see above).
bool IsLocalEndpoint(absl::string_view endpoint);

// Whether a listener bound to `endpoint` must be a CURVE server under `policy`.
bool CurveRequired(absl::string_view endpoint, CurvePolicy policy = CurvePolicy::kUnlessLocal);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_LISTEN_POLICY_H_
