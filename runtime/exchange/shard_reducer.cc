#include "runtime/exchange/shard_reducer.h"

namespace cohort {

ShardReducer::ShardReducer(const std::vector<GradientBucket>& plan, const TensorArena& arena,
                           CollectiveBackend& backend)
    : pieces_(ShardPieces(plan, arena, backend.size())), backend_(backend) {}

absl::Status ShardReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                  uint64_t /*step*/) {
  ScaleInPlace(grad, count, scale);
  for (const ShardPiece& piece : pieces_[bucket]) {
    if (absl::Status status =
            backend_.ReduceSum(grad + piece.offset, piece.count, COHORT_DTYPE_FLOAT32, piece.owner);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
