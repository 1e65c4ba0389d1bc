// ChannelRendezvousStore: the worker's side of the trial's rendezvous store, spoken over its
// WorkerLink to the supervisor's RendezvousService.
//
// Set sends a RendezvousSet and returns once it is queued; the link keeps the worker's messages
// in order, so this worker's later Gets see it. Get asks with a RendezvousGet and waits for the
// RendezvousValue with the same request id; while nobody has set the key it asks again after a
// backoff that grows from 1 ms to 50 ms, until the timeout. Commands that arrive meanwhile (a
// StopCommand) are kept, in arrival order, for the owner to take:
//
//   ChannelRendezvousStore store(*link);
//   store.Set("rank/0/address", address).IgnoreError();
//   absl::StatusOr<std::string> peer = store.Get("rank/1/address", std::chrono::seconds(30));
//   for (WorkerCommand& command : store.TakePendingCommands()) { ... }
//
// Thread-safety: one thread at a time, and no other use of the link while Set or Get runs.
#ifndef COHORT_RUNTIME_CONTROL_CHANNEL_RENDEZVOUS_STORE_H_
#define COHORT_RUNTIME_CONTROL_CHANNEL_RENDEZVOUS_STORE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/control/worker_link.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class ChannelRendezvousStore final : public RendezvousStore {
 public:
  // `link` must outlive the store.
  explicit ChannelRendezvousStore(WorkerLink& link);

  // INVALID_ARGUMENT for a value over kMaxRendezvousValueBytes (nothing is sent); UNAVAILABLE
  // when the link cannot queue it.
  absl::Status Set(const std::string& key, const std::string& value) override;

  // The value of `key`. DEADLINE_EXCEEDED naming the key when it is not set within `timeout`
  // (with no answer from the supervisor, too); UNAVAILABLE when the link cannot queue a get.
  absl::StatusOr<std::string> Get(const std::string& key,
                                  std::chrono::milliseconds timeout) override;

  // The commands other than RendezvousValue that arrived during Gets, oldest first; the store
  // forgets them.
  std::vector<WorkerCommand> TakePendingCommands();

 private:
  // The answer to request `request_id`, waiting until `deadline`. Other commands are queued;
  // answers to earlier requests are discarded.
  std::optional<RendezvousValue> AwaitAnswer(uint64_t request_id,
                                             std::chrono::steady_clock::time_point deadline);
  // Waits until `until`, queueing the commands that arrive and discarding stale answers.
  void Pause(std::chrono::steady_clock::time_point until);

  WorkerLink& link_;
  uint64_t next_request_id_ = 1;
  std::vector<WorkerCommand> pending_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_CHANNEL_RENDEZVOUS_STORE_H_
