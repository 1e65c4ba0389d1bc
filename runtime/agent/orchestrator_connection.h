// OrchestratorConnection: the agent's end of the control channel, a ZeroMQ DEALER whose routing
// identity is the agent id, connected to the orchestrator's ROUTER (docs/protocol.md).
//
// ZeroMQ connects in the background and reconnects by itself; messages sent meanwhile are queued.
// Given a CurveClientConfig, the DEALER is a CURVE client (docs/protocol.md, "Security"); the
// orchestrator accepts it only when its key is authorized under the name equal to the agent id.
// Send stamps each message with the next message id. Drain decodes every buffer received with
// DecodeControlMessage: a malformed one (not a control envelope, another protocol major, an
// unknown message type...) is dropped and reported to `on_dropped` with the peer and the reason,
// never returned.
//
// The DEALER sends ZeroMQ heartbeats (a PING every 2 s): a connection whose orchestrator does not
// answer them for 10 s (stopped, or its host gone, with no word on the wire) is taken as lost, as
// one that closed is. Connected() says whether the connection is up now, from the socket's
// monitor (ConnectionWatch); ZeroMQ reconnects by itself meanwhile.
//
// fd() is ZeroMQ's ZMQ_FD, for an event loop to watch for readability. It is edge-triggered: it
// signals that the socket's state may have changed, not that a message waits, and a send can
// consume the signal; so drain after every wake-up and after sending, and on a timer too.
//
//   auto connection = OrchestratorConnection::Connect("tcp://10.0.0.5:29400", "node-3");
//   (*connection)->Send(AgentHello{...});
//   for (DecodedControl& message : (*connection)->Drain()) { ... }
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_AGENT_ORCHESTRATOR_CONNECTION_H_
#define COHORT_RUNTIME_AGENT_ORCHESTRATOR_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/connection_watch.h"
#include "runtime/control/control_messages.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

class OrchestratorConnection {
 public:
  using DroppedHandler = std::function<void(absl::string_view why)>;

  // INVALID_ARGUMENT for an agent id that is empty, longer than 255 bytes or starts with a zero
  // byte, a malformed endpoint, or keys that ConfigureCurveClient refuses. `on_dropped` defaults
  // to a line on stderr. With `curve`, the connection is a CURVE client.
  static absl::StatusOr<std::unique_ptr<OrchestratorConnection>> Connect(
      const std::string& endpoint, const std::string& agent_id, DroppedHandler on_dropped = {},
      const std::optional<CurveClientConfig>& curve = std::nullopt);

  // Closing waits up to a second for queued messages to leave.
  ~OrchestratorConnection() = default;
  OrchestratorConnection(const OrchestratorConnection&) = delete;
  OrchestratorConnection& operator=(const OrchestratorConnection&) = delete;

  // Queues `message` (as a reply to `correlation_id`, 0 for none) without blocking; returns its
  // message id. UNAVAILABLE when the queue is full (the orchestrator has been away long).
  absl::StatusOr<uint64_t> Send(const ControlMessage& message, uint64_t correlation_id = 0);

  // Drops the connection and connects again on the same socket (same identity, same message ids,
  // same fd()): for a connection that is up but whose orchestrator does not hear it. A ROUTER
  // that still holds the agent's earlier connection (one lost while the orchestrator was stopped)
  // takes a new one under the same identity for a stranger and never routes it; the next
  // connection, made once the earlier one is gone there, is heard. Messages queued on the dropped
  // connection are lost with it.
  absl::Status ConnectAfresh();

  // Every valid message waiting now, in arrival order; never blocks.
  std::vector<DecodedControl> Drain();

  // Whether the connection's handshake has succeeded and it was not lost since (reads the
  // socket's events that arrived; never blocks).
  bool Connected();
  // Whether a handshake ever succeeded (the events read by Connected).
  bool EverConnected() const { return watch_->ever_connected(); }
  // Why the orchestrator refused the handshake, until one succeeds (ConnectionWatch::Refusal).
  std::optional<std::string> RefusedHandshake() { return watch_->Refusal(); }

  int fd() const { return fd_; }
  const std::string& endpoint() const { return endpoint_; }
  const std::string& agent_id() const { return agent_id_; }

 private:
  OrchestratorConnection(std::string endpoint, std::string agent_id, DroppedHandler on_dropped,
                         zmq::context_t context, zmq::socket_t socket,
                         std::unique_ptr<ConnectionWatch> watch);

  std::string endpoint_;
  std::string agent_id_;
  DroppedHandler on_dropped_;
  zmq::context_t context_;  // declared before socket_: destroyed after it, waiting for the linger
  zmq::socket_t socket_;
  std::unique_ptr<ConnectionWatch>
      watch_;  // declared after socket_: stops watching before it closes
  int fd_ = -1;
  uint64_t last_message_id_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_ORCHESTRATOR_CONNECTION_H_
