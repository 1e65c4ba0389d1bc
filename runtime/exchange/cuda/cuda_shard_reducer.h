// CudaShardReducer: ZeRO stage 2's exchange of device gradients, the device counterpart of
// ShardReducer. Each bucket is scaled in place on the communication stream, then each of its
// pieces (shard_pieces.h) is summed by NCCL's reduce onto the rank whose shard holds it; every
// rank ends with the summed gradient of its own shard, the rest of its bucket unspecified.
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_SHARD_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_SHARD_REDUCER_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/exchange/cuda/cuda_bucket_reducer.h"
#include "runtime/exchange/shard_pieces.h"

namespace cohort {

class CudaShardReducer final : public CudaBucketReducer {
 public:
  // `pieces[b]` cuts bucket b of `plan`; `backend` runs on context.communication.
  static absl::StatusOr<std::unique_ptr<BucketReducer>> Create(
      CudaContext& context, const std::vector<GradientBucket>& plan,
      std::vector<std::vector<ShardPiece>> pieces, CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;

 private:
  CudaShardReducer(CudaContext& context, std::vector<std::vector<ShardPiece>> pieces,
                   CollectiveBackend& backend)
      : CudaBucketReducer(context), pieces_(std::move(pieces)), backend_(backend) {}

  const std::vector<std::vector<ShardPiece>> pieces_;
  CollectiveBackend& backend_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_SHARD_REDUCER_H_
