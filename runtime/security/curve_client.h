// The client side of CURVE on a control channel: an agent connecting to the orchestrator, or a
// client connecting to either, proves its identity with its key pair and accepts only the server
// whose public key it was given.
//
//   zmq::socket_t dealer(context, zmq::socket_type::dealer);
//   absl::Status s = ConfigureCurveClient(dealer, *ReadSecretKeyFile(key_path), orchestrator_key);
//   dealer.connect("tcp://orchestrator:5555");
//
// Thread-safety: as the socket passed in (call it on the thread that owns the socket).
#ifndef COHORT_RUNTIME_SECURITY_CURVE_CLIENT_H_
#define COHORT_RUNTIME_SECURITY_CURVE_CLIENT_H_

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/security/curve_keys.h"

namespace cohort {

// Makes `socket` (not yet connected) a CURVE client with `client_keys` that talks only to the
// server holding the secret key of `server_public_key` (Z85). INVALID_ARGUMENT for malformed
// keys, FAILED_PRECONDITION when `socket` is already connected or bound, UNAVAILABLE when
// ZeroMQ refuses the options (libzmq without CURVE).
absl::Status ConfigureCurveClient(zmq::socket_t& socket, const CurveKeyPair& client_keys,
                                  absl::string_view server_public_key);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_CURVE_CLIENT_H_
