// ReadyTracker: which gradient buckets may be exchanged now, as the plugin reports gradient ranges
// final during train_batch (host_api.gradients_ready).
//
// Buckets are launched in plan order on every rank: bucket i becomes launchable once all of its
// tensors are fully ready and buckets 0..i-1 were launched. A bucket that completes early waits for
// the ones before it, so every rank runs the same collectives in the same order.
//
//   absl::StatusOr<ReadyTracker> tracker = ReadyTracker::Create(plan, arena);
//   for each gradients_ready(tensor, offset, count) during train_batch:
//     absl::StatusOr<std::vector<size_t>> launch = tracker->MarkReady(tensor, offset, count);
//     for (size_t bucket : *launch) start_exchange(plan[bucket]);
//   after train_batch: for (size_t bucket : tracker->MarkAllReady()) start_exchange(plan[bucket]);
//   after the exchange: tracker->Reset();
//
// Thread-safety: not thread-safe; use from one thread.
#ifndef COHORT_RUNTIME_EXCHANGE_READY_TRACKER_H_
#define COHORT_RUNTIME_EXCHANGE_READY_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/plugin/ready_ranges.h"

namespace cohort {

class ReadyTracker {
 public:
  // Keeps what it needs of `plan` and `arena` (names, sizes); neither needs to outlive it.
  // INVALID_ARGUMENT unless every tensor of the arena is in exactly one bucket of its own block.
  static absl::StatusOr<ReadyTracker> Create(const std::vector<GradientBucket>& plan,
                                             const TensorArena& arena);

  // Records that elements [offset, offset + count) of `tensor` are final. Returns the buckets that
  // became launchable, in plan order (often none). ReadyRanges::Add's errors (an unknown tensor,
  // an empty range, one past the tensor's end, one that overlaps a range recorded this batch);
  // nothing is recorded then.
  absl::StatusOr<std::vector<size_t>> MarkReady(size_t tensor, uint64_t offset, uint64_t count);

  // Records every range not yet reported as final (what train_batch returning means) and returns
  // the buckets not launched before, in plan order. The tensors it completes count as completed
  // in reverse registration order.
  std::vector<size_t> MarkAllReady();

  // The tensors completed since the last Reset, in the order they were: after MarkAllReady, every
  // tensor once (what PlanBuckets takes as a ready order).
  const std::vector<size_t>& completion_order() const { return completed_; }

  // Forgets every range and launch, for the next batch.
  void Reset();

  // True once every bucket was returned by MarkReady or MarkAllReady since the last Reset.
  bool AllLaunched() const { return next_launch_ == bucket_pending_.size(); }

 private:
  explicit ReadyTracker(const TensorArena& arena) : ranges_(arena) {}

  void CompleteTensor(size_t tensor);
  std::vector<size_t> Launchable();

  ReadyRanges ranges_;
  std::vector<size_t> bucket_of_;       // each tensor's bucket
  std::vector<size_t> bucket_tensors_;  // tensors per bucket
  std::vector<size_t> bucket_pending_;  // tensors of each bucket not yet fully ready
  size_t next_launch_ = 0;              // the first bucket not launched yet
  std::vector<size_t> completed_;       // tensors completed this batch, in order
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_READY_TRACKER_H_
