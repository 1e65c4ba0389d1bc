// RendezvousHost: where the workers of a task spanning agents meet. It binds a WorkerHub on a TCP
// endpoint every agent's workers can reach and serves a RendezvousService there: the ranks set
// and get their Gloo addresses under their task's prefix ("task-12/"), which StartTask.rendezvous
// names, and the orchestrator forgets a task's keys once the task is over. Messages other than
// RendezvousSet and RendezvousGet are dropped and logged, as are malformed ones.
//
// What peers can make it hold is bounded: a key must name a task the filter accepts (a live task
// spanning agents, SetTaskFilter) in the form Forget is given ("task-12/", not "task-012/"), and
// a task holds at most kMaxRendezvousKeysPerTask keys and
// kMaxRendezvousBytesPerTask bytes of keys and values. Other sets are dropped, and the drops are
// logged at most once a minute per kind of refusal (saying how many were held back).
//
// The hub lives in the orchestrator's ZeroMQ context, so that where its listener needs CURVE the
// setup makes it a CURVE server vetted by the authenticator running on that context
// (ServerSecurity::ConfigureRendezvousSocket): peers without an authorized key never get in.
//
//   auto host = RendezvousHost::Bind(context, "tcp://10.0.0.5:29402", [&](zmq::socket_t& s) {
//     return security.ConfigureRendezvousSocket(s);
//   });
//   if (!host.ok()) return host.status();
//   orchestrator_options.rendezvous_endpoint = (*host)->endpoint();
//   ...  // in the daemon's loop, woken by (*host)->NotificationFd() or by its tick:
//   (*host)->Serve();
//   (*host)->Forget("task-12/");  // task 12 has ended on every agent
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_RENDEZVOUS_HOST_H_
#define COHORT_RUNTIME_ORCHESTRATOR_RENDEZVOUS_HOST_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/rendezvous_service.h"
#include "runtime/control/worker_hub.h"
#include "runtime/security/refusal_log.h"

namespace cohort {

class RendezvousHost {
 public:
  // Receives each log line (without a newline). Default: the line on stderr prefixed
  // "orchestrator: rendezvous: ".
  using LogFunction = std::function<void(absl::string_view line)>;

  // Binds `endpoint` ("tcp://0.0.0.0:29402"; a port of "*" picks a free one) in `context`, which
  // must outlive the host, after `setup` prepared the socket (when set). INVALID_ARGUMENT for a
  // malformed endpoint, UNAVAILABLE when it cannot be bound, the message naming it; the error of
  // `setup` as it is.
  static absl::StatusOr<std::unique_ptr<RendezvousHost>> Bind(
      zmq::context_t& context, const std::string& endpoint,
      const WorkerHub::SocketSetup& setup = {}, LogFunction log = {});

  RendezvousHost(const RendezvousHost&) = delete;
  RendezvousHost& operator=(const RendezvousHost&) = delete;

  // The bound endpoint, its port resolved: "tcp://127.0.0.1:41234".
  const std::string& endpoint() const { return hub_->endpoint(); }

  // A descriptor to watch for readability (zmq::pollitem_t{nullptr, fd, ZMQ_POLLIN}, uv_poll).
  // Edge-triggered: it only means "call Serve"; call Serve on a timer as well.
  int NotificationFd() { return hub_->NotificationFd(); }

  // Answers every message waiting now and returns how many there were; never blocks.
  size_t Serve();

  // Handles one message as Serve does for each it receives from `peer` (a routing id): a set is
  // kept within the bounds above, a get answered through the hub, anything else dropped and
  // logged.
  void Handle(const std::string& peer, const WorkerMessage& message);

  // Forgets the keys under `prefix` (an ended task's "task-12/"); an empty prefix is ignored,
  // so one task's end never clears the others' keys.
  void Forget(absl::string_view prefix);

  // How many keys are held, over every task.
  size_t keys() const { return service_.size(); }

  // Which tasks may keep keys: called with the id a key's "task-<id>/" prefix names. Unset, every
  // task may.
  void SetTaskFilter(std::function<bool(uint64_t task_id)> accepts) {
    accepts_ = std::move(accepts);
  }

 private:
  struct TaskUse {
    size_t keys = 0;
    size_t bytes = 0;
  };

  RendezvousHost(std::unique_ptr<WorkerHub> hub, LogFunction log);
  // Whether a set of `key` to `value` may be kept; logs (at most once a minute) why not.
  bool MayKeep(const std::string& key, const std::string& value);

  std::unique_ptr<WorkerHub> hub_;
  LogFunction log_;
  RefusalLog refusals_;
  RendezvousService service_;
  std::function<bool(uint64_t)> accepts_;
  std::map<std::string, TaskUse, std::less<>> use_;  // by prefix, "task-12/"
};

// What one task's rendezvous may hold: enough for thousands of ranks' addresses and NCCL ids.
inline constexpr size_t kMaxRendezvousKeysPerTask = 65536;
inline constexpr size_t kMaxRendezvousBytesPerTask = size_t{16} << 20;

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_RENDEZVOUS_HOST_H_
