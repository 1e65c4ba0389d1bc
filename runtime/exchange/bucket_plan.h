// GradientBucket and PlanBuckets: how a TensorArena's gradients are cut into the buckets that are
// exchanged together (tensor fusion), in the fixed order every rank launches them.
//
// A bucket is a contiguous element range of one arena block, so exchanging it needs no copy. By
// default tensors are taken in reverse registration order, the order backward usually finishes
// them, so the first bucket holds the last registered tensors and can be launched while backward
// is still running. A model whose backward finishes its tensors in another order (heads
// registered before the trunk, tied weights) passes the order it observed, and the buckets follow
// it as far as contiguous ranges can.
//
//   absl::StatusOr<std::vector<GradientBucket>> plan =
//       PlanBuckets(arena, /*bucket_bytes=*/64 << 20, /*first_bucket_bytes=*/1 << 20);
//   for (const GradientBucket& b : *plan) exchange(arena.blocks()[b.block].grad, b.offset,
//   b.count);
//
// Thread-safety: a pure function of its arguments; safe to call from any thread.
#ifndef COHORT_RUNTIME_EXCHANGE_BUCKET_PLAN_H_
#define COHORT_RUNTIME_EXCHANGE_BUCKET_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/arena/tensor_arena.h"

namespace cohort {

struct GradientBucket {
  size_t block = 0;     // index into TensorArena::blocks()
  uint64_t offset = 0;  // first element of the range within the block
  uint64_t count = 0;   // elements in the range, alignment gaps between its tensors included
  std::vector<size_t> tensors;  // the tensors in the range, in reverse registration order

  friend bool operator==(const GradientBucket&, const GradientBucket&) = default;
};

// Cuts every block's tensors into buckets. A bucket never spans blocks and never splits a tensor.
// Tensors are taken in `ready_order`: every tensor index once, the one whose gradient backward
// completes first, first; empty means reverse registration order. A tensor joins its block's open
// bucket when it lies right before or after the bucket's range in the block and the range stays
// within the limit in bytes, else it opens a new bucket; so a tensor larger than the limit gets a
// bucket of its own, and a limit of 0 gives one bucket per tensor (no fusion). Then two of a
// block's buckets that follow each other, in the order and in the block, are joined when the
// joined range stays within the limit (so a tensor completed a little out of order does not split
// a bucket). The limit is `first_bucket_bytes` for each block's first bucket and `bucket_bytes`
// after it.
//
// Each bucket is a run of consecutive tensors in the order (of its block), and the buckets are
// ordered by when their last tensor completes. Within a bucket, `tensors` lists its tensors in
// reverse registration order (descending offset). For reverse registration order this gives
// buckets ordered by their lowest registration index, descending. The plan depends only on the
// arena's layout, the two limits and the order, so every rank given the same ones computes the
// same plan. An arena with no tensors gives an empty plan. INVALID_ARGUMENT for an order that is
// not empty and not a permutation of the tensors; INTERNAL if the arena's placements are not in
// registration order within a block.
absl::StatusOr<std::vector<GradientBucket>> PlanBuckets(const TensorArena& arena,
                                                        uint64_t bucket_bytes,
                                                        uint64_t first_bucket_bytes,
                                                        absl::Span<const size_t> ready_order = {});

// The two limits of PlanBuckets for the arena's gradient (all blocks together) under a fusion
// threshold of `threshold_bytes` (optimizations.tensor_fusion_threshold): buckets of at most a
// quarter of the gradient, and a first bucket of at most a sixteenth (and at most 1 MiB), so that
// the exchange starts early in backward and no bucket waits for the whole of it; never below
// kSmallestBucketBytes, never above the threshold. Below that floor a collective's latency (the
// wake-ups of the threads on both sides, a round trip over the transport) outweighs the backward
// time it could overlap: a gradient of at most 1 MiB is one bucket, as under DDP's 1 MB first
// bucket. (With a 16 KiB floor the mlp example's 28 KB gradient went in two buckets and trained
// at a quarter of the one-bucket speed at 2 CPU slots; with a 256 KiB floor a 1 MB gradient went
// in four and trained at 0.69 of the one-bucket speed.) tensor_fusion_threshold auto may still
// try smaller buckets (fusion_tuner.h).
struct BucketLimits {
  uint64_t bucket_bytes = 0;
  uint64_t first_bucket_bytes = 0;

  friend bool operator==(const BucketLimits&, const BucketLimits&) = default;
};
inline constexpr uint64_t kSmallestBucketBytes = 1 << 20;
BucketLimits FitBucketLimits(const TensorArena& arena, uint64_t threshold_bytes);

// Bytes of the arena's gradient, all blocks together.
uint64_t GradientBytes(const TensorArena& arena);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_BUCKET_PLAN_H_
