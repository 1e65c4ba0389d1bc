// WorkerHub: the supervisor's end of the worker <-> supervisor channel, a ZeroMQ ROUTER bound to
// an endpoint that every WorkerLink of the run connects to.
//
// Each received message carries its peer (the connection's routing id), which is where commands
// for that worker go. Malformed messages are dropped and reported, never returned.
//
// A hub owns its ZeroMQ context, or lives in one it is given: a hub whose peers must be CURVE
// clients is bound in the context whose authenticator vets them (ZeroMQ asks the ZAP handler of
// the socket's own context), with a SocketSetup that makes it a CURVE server before it binds.
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
//   // In a given context (which must outlive the hub), prepared before it binds:
//   auto secured = WorkerHub::Bind(context, "tcp://0.0.0.0:29402", [&](zmq::socket_t& socket) {
//     return authenticator.ConfigureServer(socket, server_keys);
//   });
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_CONTROL_WORKER_HUB_H_
#define COHORT_RUNTIME_CONTROL_WORKER_HUB_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
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
  // Prepares the ROUTER (its own options already set) before it binds.
  using SocketSetup = std::function<absl::Status(zmq::socket_t& socket)>;

  // Binds to `endpoint`; "tcp://127.0.0.1:*" picks a free port. `on_dropped` is called with the
  // reason for each malformed message, and for a failing socket (default: a line on stderr).
  // INVALID_ARGUMENT for a malformed endpoint, UNAVAILABLE when it cannot be bound (address in use,
  // no such folder).
  static absl::StatusOr<std::unique_ptr<WorkerHub>> Bind(const std::string& endpoint,
                                                         DroppedHandler on_dropped = {});

  // As above, with the ROUTER in `context`, which must outlive the hub, and `setup` called on it
  // before it binds; an error of `setup` is returned as it is, and nothing is bound.
  static absl::StatusOr<std::unique_ptr<WorkerHub>> Bind(zmq::context_t& context,
                                                         const std::string& endpoint,
                                                         const SocketSetup& setup,
                                                         DroppedHandler on_dropped = {});

  // Closes the socket. Commands still queued get up to a second to leave: a hub that owns its
  // context waits for them here, one in a given context leaves that to the context's end.
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
  WorkerHub(std::string endpoint, DroppedHandler on_dropped, zmq::socket_t socket);

  std::string endpoint_;
  DroppedHandler on_dropped_;
  // Empty for a hub in a given context. Declared before socket_: destroyed after it, waiting for
  // the linger.
  std::optional<zmq::context_t> owned_context_;
  zmq::socket_t socket_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_WORKER_HUB_H_
