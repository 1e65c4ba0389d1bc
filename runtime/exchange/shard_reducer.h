// ShardReducer: ZeRO stage 2's exchange (optimizations.zero_stage 2) on the host. Each bucket's
// float32 slice is cut where the ranks' shards of its block meet (shard_pieces.h), and each piece
// is summed onto the rank that owns it only (a reduce, not an allreduce): every rank ends with the
// summed gradient of its own shard, which is all its sharded optimizer reads, and half the bytes
// of an allreduce cross the wire. The rest of its gradients is left unspecified.
//
//   ShardReducer reducer(plan, arena, backend);   // shards: backend.size() ranks
//   reducer.Reduce(bucket, grad_slice, bucket.count, /*scale=*/0.5f, step);
//
// The engine sums a piece in its own order, which may differ from its allreduce's: with 2 ranks
// the sum is the same bits (a + b), with more it may differ by float rounding.
//
// Thread-safety: one thread at a time (the backend's rule).
#ifndef COHORT_RUNTIME_EXCHANGE_SHARD_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_SHARD_REDUCER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/shard_pieces.h"

namespace cohort {

class ShardReducer final : public BucketReducer {
 public:
  // `plan` is a plan of `arena`, host float32 gradients; the backend must outlive the reducer.
  ShardReducer(const std::vector<GradientBucket>& plan, const TensorArena& arena,
               CollectiveBackend& backend);

  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;

 private:
  std::vector<std::vector<ShardPiece>> pieces_;  // per bucket
  CollectiveBackend& backend_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_SHARD_REDUCER_H_
