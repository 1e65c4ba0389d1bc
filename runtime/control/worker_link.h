// WorkerLink: the worker's end of the worker <-> supervisor channel, a ZeroMQ DEALER connected
// to the supervisor's WorkerHub.
//
// Connecting does not wait for the hub: messages sent before it is up are queued and delivered
// once the connection is made. Commands from the hub are polled between batches, or waited for.
//
// A link to a hub that is a CURVE server is made a CURVE client before it connects, through
// WorkerLinkOptions::setup_socket (ConfigureCurveClient, runtime/security/curve_client.h). A hub
// that refuses the link never answers it: its messages wait in the queue, and destroying the link
// waits out the close_timeout.
//
//   auto link = WorkerLink::Connect(endpoint);
//   if (!link.ok()) return link.status();
//   absl::Status sent = (*link)->Send(WorkerHello{.trial_id = 7, .pid = getpid()});
//   ...
//   if (std::optional<WorkerCommand> command = (*link)->PollCommand()) { /* stop */ }
//   sent = (*link)->Send(TrialFinished{.trial_id = 7, .batches = 100});
//   link->reset();  // waits (bounded) until TrialFinished has left the process
//
//   WorkerLinkOptions curve;
//   curve.setup_socket = [&](zmq::socket_t& socket) {
//     return ConfigureCurveClient(socket, agent_keys, orchestrator_public_key);
//   };
//   auto rendezvous = WorkerLink::Connect("tcp://10.0.0.5:29402", curve);
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_CONTROL_WORKER_LINK_H_
#define COHORT_RUNTIME_CONTROL_WORKER_LINK_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

// -1 ms means no limit; other negative durations make Connect fail.
struct WorkerLinkOptions {
  // How long Send may wait for room in the outgoing queue before it gives up.
  std::chrono::milliseconds send_timeout{5000};
  // How long destruction may wait for queued messages to be delivered.
  std::chrono::milliseconds close_timeout{5000};
  // When set, prepares the DEALER (its own options already set) before it connects; its error
  // fails Connect.
  std::function<absl::Status(zmq::socket_t& socket)> setup_socket;
};

class WorkerLink {
 public:
  using DroppedHandler = std::function<void(absl::string_view why)>;

  // Connects to `endpoint` ("ipc://..." or "tcp://127.0.0.1:port"). Does not wait for the peer.
  // INVALID_ARGUMENT for a malformed endpoint or an unsupported transport; the error of
  // options.setup_socket as it is.
  static absl::StatusOr<std::unique_ptr<WorkerLink>> Connect(const std::string& endpoint,
                                                             WorkerLinkOptions options = {});

  // Waits up to close_timeout until queued messages are delivered, so a final TrialFinished is
  // not lost when the process exits right after; then drops what is left.
  ~WorkerLink();
  WorkerLink(const WorkerLink&) = delete;
  WorkerLink& operator=(const WorkerLink&) = delete;

  // Queues the message. UNAVAILABLE if it cannot be queued within send_timeout (the queue is
  // full: the hub is gone or not reading).
  absl::Status Send(const WorkerMessage& message);

  // The next command if one has arrived; never blocks. Malformed commands are dropped and passed
  // to the dropped handler on the way.
  std::optional<WorkerCommand> PollCommand();

  // The next command, waiting up to `timeout` for one to arrive; nullopt on timeout. Malformed
  // commands are dropped as by PollCommand and do not end the wait.
  std::optional<WorkerCommand> WaitCommand(std::chrono::milliseconds timeout);

  // Replaces the handler called with the reason for each dropped command. The default prints a
  // line on stderr; an empty handler restores it.
  void SetDroppedHandler(DroppedHandler on_dropped);

  const std::string& endpoint() const { return endpoint_; }

 private:
  WorkerLink(std::string endpoint, zmq::context_t context, zmq::socket_t socket);

  void Drop(absl::string_view why);

  std::string endpoint_;
  DroppedHandler on_dropped_;
  zmq::context_t context_;  // declared before socket_: destroyed after it, waiting for the linger
  zmq::socket_t socket_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_WORKER_LINK_H_
