// CurveAuthenticator: the server side of CURVE on a control channel. It answers ZeroMQ's
// authentication requests (ZAP, RFC 27, on inproc://zeromq.zap.01) for every CURVE server socket
// of one ZeroMQ context, accepting only clients whose public key is authorized, and logs every
// refusal. A message from an accepted client carries the key's name as its "User-Id" property, so
// the server knows who sent it (AuthenticatedPeerName).
//
// Refused and logged: a CURVE client with an unknown key (with its address and key), a client
// that does not speak CURVE or does not know the server's public key (a failed handshake, with the
// listening endpoint: ZeroMQ does not say more). Refused peers never deliver a message.
//
//   zmq::context_t context;
//   auto auth = CurveAuthenticator::Start(context, *AuthorizedKeys::Load(path), log_sink);
//   zmq::socket_t router(context, zmq::socket_type::router);
//   if (absl::Status s = (*auth)->ConfigureServer(router, server_keys); !s.ok()) return s;
//   router.bind("tcp://*:5555");
//   ... zmq::message_t payload; ... AuthenticatedPeerName(payload)  // "agent-7"
//   router.close();  // before the authenticator goes away
//
// Contract: ZeroMQ accepts any CURVE client when no ZAP handler is running, so start the
// authenticator before binding a server socket and destroy it only after closing every server
// socket configured through it; destroy it before its context.
//
// Thread-safety: ConfigureServer must be called on the thread that owns the socket; Start,
// ConfigureServer, SetAuthorizedKeys and the destructor may be called from different threads.
// The log sink is called on the authenticator's own thread.
#ifndef COHORT_RUNTIME_SECURITY_CURVE_SERVER_H_
#define COHORT_RUNTIME_SECURITY_CURVE_SERVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/security/authorized_keys.h"
#include "runtime/security/curve_keys.h"
#include "runtime/security/refusal_log.h"

namespace cohort {

class CurveAuthenticator {
 public:
  // Binds the ZAP endpoint of `context` and starts answering on a thread of its own. `log`
  // receives refusals (default: PrintSecurityLine); each distinct refusal is reported once a
  // minute at most. FAILED_PRECONDITION when a ZAP handler already runs on this context.
  static absl::StatusOr<std::unique_ptr<CurveAuthenticator>> Start(zmq::context_t& context,
                                                                   AuthorizedKeys keys,
                                                                   SecurityLogSink log = {});

  // Stops the thread and unbinds the ZAP endpoint (see the contract above).
  ~CurveAuthenticator();
  CurveAuthenticator(const CurveAuthenticator&) = delete;
  CurveAuthenticator& operator=(const CurveAuthenticator&) = delete;

  // Makes `socket` (of this authenticator's context, not yet bound) a CURVE server with
  // `server_keys`, and watches its handshakes to log the peers refused before ZAP is asked. The
  // watch replaces any monitor set on `socket`. INVALID_ARGUMENT for malformed keys,
  // FAILED_PRECONDITION when `socket` is already bound or connected, UNAVAILABLE when the socket
  // or the authenticator's thread fails.
  absl::Status ConfigureServer(zmq::socket_t& socket, const CurveKeyPair& server_keys);

  // Replaces the authorized keys; connections made from now on are checked against `keys`
  // (established ones stay).
  void SetAuthorizedKeys(AuthorizedKeys keys);

 private:
  class Handler;

  CurveAuthenticator(std::unique_ptr<Handler> handler, zmq::socket_t control);

  // Asks the handler's thread to watch the monitor bound at `endpoint`; waits for its answer.
  absl::Status Watch(const std::string& endpoint);

  std::unique_ptr<Handler> handler_;
  std::mutex control_mutex_;
  zmq::socket_t control_;  // guarded by control_mutex_: requests to the handler's thread
  std::thread thread_;
};

// The name CurveAuthenticator gave the sender of `message` (its ZAP User-Id), or "" when the
// message did not come through an authenticated connection. `message` must be a received frame.
std::string AuthenticatedPeerName(const zmq::message_t& message);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_CURVE_SERVER_H_
