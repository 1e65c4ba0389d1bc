#include "runtime/exchange/cuda/cuda_shard_reducer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/cuda/exchange_kernels.h"

namespace cohort {

absl::StatusOr<std::unique_ptr<BucketReducer>> CudaShardReducer::Create(
    CudaContext& context, const std::vector<GradientBucket>& plan,
    std::vector<std::vector<ShardPiece>> pieces, CollectiveBackend& backend) {
  if (pieces.size() != plan.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the shards' pieces of ", pieces.size(),
                                                   " buckets for a plan of ", plan.size()));
  }
  std::unique_ptr<CudaShardReducer> reducer(
      new CudaShardReducer(context, std::move(pieces), backend));
  if (absl::Status s = reducer->CreateEvents(plan.size()); !s.ok()) return s;
  return std::unique_ptr<BucketReducer>(std::move(reducer));
}

absl::Status CudaShardReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                      uint64_t /*step*/) {
  if (absl::Status s = BeginBucket(bucket); !s.ok()) return s;
  if (absl::Status s =
          CudaStatus(EnqueueScale(grad, count, scale, context_.communication), "scaling a bucket");
      !s.ok()) {
    return s;
  }
  for (const ShardPiece& piece : pieces_[bucket]) {
    if (absl::Status s =
            backend_.ReduceSum(grad + piece.offset, piece.count, COHORT_DTYPE_FLOAT32, piece.owner);
        !s.ok()) {
      return s;
    }
  }
  return EndBucket();
}

}  // namespace cohort
