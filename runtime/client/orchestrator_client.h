// OrchestratorClient: the CLI's end of the client channel, a ZeroMQ DEALER connected to the
// orchestrator's client ROUTER, asking one question at a time (docs/protocol.md).
//
// Request stamps the request with the next message id and the sender "cohort-cli", then waits for
// the reply whose correlation id is that message id. Anything else that arrives meanwhile (a late
// answer to an earlier request, a buffer that does not decode) is dropped. A ClientError reply
// becomes a non-OK status carrying its message; no reply in time is UNAVAILABLE. Given a
// CurveClientConfig, the DEALER is a CURVE client (docs/protocol.md, "Security"): an
// orchestrator that refuses it never answers, which looks like no reply in time.
//
//   absl::StatusOr<std::unique_ptr<OrchestratorClient>> client =
//       OrchestratorClient::Connect("tcp://10.0.0.5:29401", curve_config);
//   absl::StatusOr<ClientMessage> reply = (*client)->Request(ListTasks{}, /*timeout_seconds=*/10);
//   if (const auto* table = std::get_if<TaskListing>(&*reply)) { ... }
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_CLIENT_ORCHESTRATOR_CLIENT_H_
#define COHORT_RUNTIME_CLIENT_ORCHESTRATOR_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/client/client_messages.h"
#include "runtime/control/connection_watch.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

// The default endpoint of the orchestrator's client ROUTER.
inline constexpr char kDefaultOrchestratorClientEndpoint[] = "tcp://127.0.0.1:29401";

// The sender name the CLI puts in every request.
inline constexpr char kCliSenderName[] = "cohort-cli";

// Added to "no answer" on a connection without CURVE, whose refusal looks the same.
inline constexpr char kCurveHint[] =
    "the orchestrator may require CURVE: give --key and --orchestrator-key";

class OrchestratorClient {
 public:
  // Connects in the background (ZeroMQ retries until the orchestrator is there), so this fails
  // only for a malformed endpoint, a tcp:// port outside 1 to 65535 or an unsupported transport
  // (INVALID_ARGUMENT), a tcp:// host that does not resolve (UNAVAILABLE, naming it), or keys
  // that ConfigureCurveClient refuses. With `curve`, the connection is a CURVE client.
  static absl::StatusOr<std::unique_ptr<OrchestratorClient>> Connect(
      const std::string& endpoint, std::optional<CurveClientConfig> curve = std::nullopt);

  // Closing drops whatever request is still queued.
  ~OrchestratorClient() = default;
  OrchestratorClient(const OrchestratorClient&) = delete;
  OrchestratorClient& operator=(const OrchestratorClient&) = delete;

  // Sends `request` and returns the orchestrator's reply to it, unless that reply is a
  // ClientError, which is returned as ClientErrorStatus. UNAVAILABLE, at once, "no orchestrator
  // at <endpoint>: nothing listens there (...) (is `cohort orchestrator` running?)" when the
  // connection is refused, or "the orchestrator at <endpoint> refused the connection: it refused
  // the handshake (...)" (with kCurveHint on a connection without CURVE). UNAVAILABLE "no answer
  // from the orchestrator at <endpoint> within N s (is `cohort orchestrator` running?)" when none
  // comes within `timeout_seconds` otherwise, naming the reason when a buffer that could not be
  // decoded arrived meanwhile (e.g. another protocol major), and, on a connection without CURVE
  // that never completed a handshake, adding kCurveHint; after a handshake it asks whether the
  // orchestrator has stopped instead.
  absl::StatusOr<ClientMessage> Request(const ClientMessage& request, double timeout_seconds);

  // Request, expecting a `Reply`: INTERNAL "the orchestrator answered <request> with <reply>"
  // for any other reply type.
  template <typename Reply>
  absl::StatusOr<Reply> RequestReply(const ClientMessage& request, double timeout_seconds);

  const std::string& endpoint() const { return endpoint_; }

 private:
  OrchestratorClient(std::string endpoint, bool uses_curve, zmq::context_t context,
                     zmq::socket_t socket, std::unique_ptr<ConnectionWatch> watch);
  // The UNAVAILABLE status for a connection the watch says failed.
  absl::Status ConnectionFailed(const std::string& failure) const;

  std::string endpoint_;
  bool uses_curve_;
  zmq::context_t context_;  // declared before socket_ and watch_: destroyed after them
  zmq::socket_t socket_;
  std::unique_ptr<ConnectionWatch> watch_;  // says at once when nothing listens or it is refused
  uint64_t last_message_id_ = 0;
};

// The status for a refused request, with the error's message: kNotFound is NOT_FOUND,
// kInvalidRequest INVALID_ARGUMENT, kUnschedulable FAILED_PRECONDITION, kUnsupportedVersion
// UNIMPLEMENTED and kUnspecified UNKNOWN.
absl::Status ClientErrorStatus(const ClientError& error);

template <typename Reply>
absl::StatusOr<Reply> OrchestratorClient::RequestReply(const ClientMessage& request,
                                                       double timeout_seconds) {
  absl::StatusOr<ClientMessage> reply = Request(request, timeout_seconds);
  if (!reply.ok()) return reply.status();
  if (Reply* typed = std::get_if<Reply>(&*reply)) return std::move(*typed);
  return absl::InternalError(absl::StrCat("the orchestrator answered ", ClientMessageName(request),
                                          " with ", ClientMessageName(*reply)));
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_CLIENT_ORCHESTRATOR_CLIENT_H_
