// ShardGather: a ZeRO checkpoint's optimizer state assembled off the training thread. At the
// checkpoint's step boundary (Capture) rank 0 lays out the whole state's bytes with its own pieces
// in place, and every other rank copies its shard into host memory (1/N of the state, kept from
// checkpoint to checkpoint). From a GPU these copies go through page-locked memory
// (StagedHostCopies), landed by the thread that moves the pieces. The
// other ranks' pieces then travel to rank 0 over a group of their own (the trial's checkpoint
// group) while training goes on over the trial's other groups: on rank 0 inside the checkpoint
// writer's thread, right before it writes (AssembleInto), and on the other ranks on a thread of
// this object's (Start).
//
//   ShardGather gather(checkpoint_group);
//   rank 0:      status = gather.Capture(optimizer, batch, &files["optimizer"]);
//                writer.Start(info, files, [&](auto& files) {
//                  return gather.AssembleInto(files["optimizer"], /*sealed=*/true); });
//   other ranks: status = gather.Capture(optimizer, batch, nullptr);
//                gather.Start();
//   status = gather.Wait();     // the other ranks: before the trial ends (Capture waits too)
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
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "runtime/arena/staged_host_copies.h"
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

  // The checkpoint after the batches counted by `batches_trained`, of `optimizer` (a sharded one,
  // which must outlive this object): on rank 0, `whole` laid out with this rank's pieces in place
  // (Optimizer::LayOutWholeStateInto); on the others (`whole` nullptr), a copy of this rank's
  // shard. Waits for the gather before it first, and returns its error instead when it failed.
  absl::Status Capture(const Optimizer& optimizer, uint64_t batches_trained, std::string* whole);

  // Rank 0: the pieces the other ranks send (each of them in Start's gather) moved into `whole`,
  // as Capture laid it out: SaveWholeStateInto's bytes once done.
  absl::Status AssembleInto(std::string& whole, bool sealed);

  // The other ranks: sends the copy's pieces to rank 0 on a thread of its own, and returns.
  void Start();

  // On a GPU: takes the page-locked memory this rank's copies will go through ahead of the first
  // checkpoint (StagedHostCopies::Reserve).
  void Reserve(DeviceMemory& memory, size_t bytes) { staged_.Reserve(memory, bytes); }

  // The other ranks: waits for Start's gather and returns how it went; OK when none was started.
  absl::Status Wait();

 private:
  // The moves of the checkpoint's pieces over the group, tagged for the flight record, and an
  // error that names the checkpoint.
  absl::Status Gather(const std::function<absl::Status(const OptimizerState::PieceMover&)>& part);

  CollectiveBackend& group_;
  const Optimizer* optimizer_ = nullptr;  // rank 0's, whose layout AssembleInto follows
  std::optional<OptimizerState> copy_;    // the other ranks' shard
  // A device's pieces on their way into `whole` (rank 0, landed by AssembleInto) or copy_ (the
  // others, landed by Start's thread).
  StagedHostCopies staged_;
  uint64_t batches_trained_ = 0;
  std::future<absl::Status> in_flight_;
  std::thread thread_;  // Start's, joined by Wait
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_SHARD_GATHER_H_
