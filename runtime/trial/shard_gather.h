// ShardGather: a ZeRO checkpoint's optimizer state assembled off the training thread. At the
// checkpoint's step boundary every rank copies its shard of the state into host memory (Capture:
// 1/N of the state); the pieces then travel to rank 0 over a group of their own (the trial's
// checkpoint group), while training goes on over the trial's other groups: on rank 0 inside the
// checkpoint writer's thread, right before it writes (AssembleInto), and on the other ranks on a
// thread of this object's (Start).
//
//   ShardGather gather(checkpoint_group);
//   status = gather.Capture(optimizer, batch);   // every rank, at the same step boundary
//   rank 0:      writer.Start(info, files, [&](auto& files) {
//                  return gather.AssembleInto(&files["optimizer"], /*sealed=*/true); });
//   other ranks: gather.Start();
//   status = gather.Wait();                      // the other ranks: before the next Capture, and
//                                                // before the trial ends
//
// Every rank captures the same checkpoints in the same order, so the group's collectives match
// from rank to rank. A rank that stops taking part leaves the others' gather with the group's
// timeout (DEADLINE_EXCEEDED), not a hang.
//
// Thread-safety: Capture, Start and Wait from one thread; AssembleInto from one other thread, after
// Capture returned and before the next Capture.
#ifndef COHORT_RUNTIME_TRIAL_SHARD_GATHER_H_
#define COHORT_RUNTIME_TRIAL_SHARD_GATHER_H_

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/optim/optimizer.h"
#include "runtime/optim/optimizer_state.h"

namespace cohort {

class ShardGather {
 public:
  // `group` joins the trial's ranks, is used by nothing else, and must outlive this object.
  explicit ShardGather(CollectiveBackend& group) : group_(group) {}
  // Waits for a gather in flight: the other ranks' part in a checkpoint is not abandoned.
  ~ShardGather();
  ShardGather(const ShardGather&) = delete;
  ShardGather& operator=(const ShardGather&) = delete;

  // Copies this rank's shard of `optimizer`'s state (a sharded one) after the batches counted by
  // `batches_trained`, for the checkpoint taken there. Waits for the gather before it first, and
  // returns its error instead of capturing when it failed.
  absl::Status Capture(const Optimizer& optimizer, uint64_t batches_trained);

  // Rank 0: the whole state, as Optimizer::SaveWholeStateInto gives it, assembled into `whole`
  // from the copy and the pieces the other ranks send (each of them in Start's gather).
  absl::Status AssembleInto(std::string* whole, bool sealed);

  // The other ranks: sends the copy's pieces to rank 0 on a thread of its own, and returns.
  void Start();

  // The other ranks: waits for Start's gather and returns how it went; OK when none was started.
  absl::Status Wait();

 private:
  // Every rank's part in the gather: rank 0 passes `whole`, the others nullptr.
  absl::Status Gather(std::string* whole, bool sealed);

  CollectiveBackend& group_;
  std::optional<OptimizerState> copy_;
  uint64_t batches_trained_ = 0;
  std::future<absl::Status> in_flight_;
  std::thread thread_;  // Start's, joined by Wait
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_SHARD_GATHER_H_
