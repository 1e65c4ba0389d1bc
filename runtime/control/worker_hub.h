// WorkerHub: the supervisor's end of the worker <-> supervisor channel, a ZeroMQ ROUTER bound to
// an endpoint that every WorkerLink of the run connects to.
//
// Each received message carries its peer (the connection's routing id), which is where commands
// for that worker go. Malformed messages are dropped and reported, never returned.
//
//   auto hub = WorkerHub::Bind("tcp://127.0.0.1:*");
//   if (!hub.ok()) return hub.status();
//   SpawnWorker((*hub)->endpoint());
//   for (WorkerHub::Received& r : (*hub)->Wait(std::chrono::seconds(1))) {
//     if (std::holds_alternative<WorkerHello>(r.message)) {
//       (*hub)->Send(r.peer, StopCommand{"searcher closed the trial"}).IgnoreError();
//     }
//   }
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_CONTROL_WORKER_HUB_H_
#define COHORT_RUNTIME_CONTROL_WORKER_HUB_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class WorkerHub {
 public:
  struct Received {
    std::string peer;  // the sender's routing id (binary): pass it to Send to answer
    WorkerMessage message;
  };
  using DroppedHandler = std::function<void(absl::string_view why)>;

  // Binds to `endpoint`; "tcp://127.0.0.1:*" picks a free port. `on_dropped` is called with the
  // reason for each malformed message, and for a failing socket (default: a line on stderr). INVALID_ARGUMENT for a
  // malformed endpoint, UNAVAILABLE when it cannot be bound (address in use, no such folder).
  static absl::StatusOr<std::unique_ptr<WorkerHub>> Bind(const std::string& endpoint,
                                                        DroppedHandler on_dropped = {});

  // Waits up to a second for commands still queued, then closes.
  ~WorkerHub();
  WorkerHub(const WorkerHub&) = delete;
  WorkerHub& operator=(const WorkerHub&) = delete;

  // The bound address (the port resolved) to hand a worker.
  const std::string& endpoint() const { return endpoint_; }

  // Every valid message waiting now, in arrival order (each peer's in the order it sent them);
  // never blocks.
  std::vector<Received> Drain();

  // A file descriptor an event loop can watch for readability (ZeroMQ's ZMQ_FD). It is
  // edge-triggered and only means "look again": after it wakes, Drain until Drain returns empty
  // (a Send may also consume the edge, so keep a periodic Drain as well).
  int NotificationFd();

  // Waits up to `timeout` for at least one valid message, then drains. Empty on timeout.
  std::vector<Received> Wait(std::chrono::milliseconds timeout);

  // Queues `command` for `peer` without blocking. NOT_FOUND if no worker with that routing id is
  // connected; UNAVAILABLE if its queue is full.
  absl::Status Send(const std::string& peer, const WorkerCommand& command);

 private:
  WorkerHub(std::string endpoint, DroppedHandler on_dropped, zmq::context_t context,
            zmq::socket_t socket);

  std::string endpoint_;
  DroppedHandler on_dropped_;
  zmq::context_t context_;  // declared before socket_: destroyed after it, waiting for the linger
  zmq::socket_t socket_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_WORKER_HUB_H_
