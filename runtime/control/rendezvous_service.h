// RendezvousService: the supervisor's side of the trial's rendezvous store. It keeps the keys
// workers set (RendezvousSet) and answers their gets (RendezvousGet) with a RendezvousValue
// through the hub; a key nobody has set yet is answered found=false and the worker asks again
// (ChannelRendezvousStore does). Every other message is left to the caller.
//
//   RendezvousService rendezvous;
//   for (WorkerHub::Received& r : hub.Wait(std::chrono::milliseconds(100))) {
//     if (rendezvous.Handle(hub, r.peer, r.message)) continue;
//     ...  // hellos, reports, heartbeats
//   }
//   rendezvous.Clear();  // before the trial's next attempt
//   rendezvous.ClearPrefix("task-12/");  // one group's keys, when several share the service
//
// Thread-safety: one thread at a time (the thread that owns the hub).
#ifndef COHORT_RUNTIME_CONTROL_RENDEZVOUS_SERVICE_H_
#define COHORT_RUNTIME_CONTROL_RENDEZVOUS_SERVICE_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/control/worker_hub.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class RendezvousService {
 public:
  // True when `message` is a rendezvous message, which is then handled: a set stores its value
  // (replacing an earlier one), a get is answered through `hub` to `peer`. An answer the hub
  // cannot queue (the peer is gone, its queue is full) is dropped: the worker asks again. False,
  // touching nothing, for any other message.
  bool Handle(WorkerHub& hub, const std::string& peer, const WorkerMessage& message);

  // The bytes of the value held under `key`; nullopt when there is none.
  std::optional<size_t> ValueBytes(const std::string& key) const;

  // Forgets every key, as a new attempt of the trial starts.
  void Clear();

  // Forgets the keys that start with `prefix` (a finished task's, "task-12/") and returns how
  // many there were; the other keys stay. An empty prefix forgets every key.
  size_t ClearPrefix(absl::string_view prefix);

  // How many keys are set.
  size_t size() const { return values_.size(); }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_RENDEZVOUS_SERVICE_H_
