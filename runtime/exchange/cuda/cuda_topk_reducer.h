// CudaTopKReducer: top-k with error feedback on the device, the counterpart of TopKReducer. Each
// bucket keeps its residual in device memory; the k entries of largest magnitude are selected as
// TopKCompressor selects them (same k, same ties, indices ascending), every rank's pairs are
// gathered by NCCL, and every rank zeroes its bucket and adds rank 0's pairs, then rank 1's, ...
// so every rank ends with the same bits, the bits the CPU reducer computes. Checkpoints keep the
// residuals (SaveState).
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_TOPK_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_TOPK_REDUCER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/exchange/cuda/cuda_bucket_reducer.h"
#include "runtime/exchange/cuda/device_buffer.h"
#include "runtime/exchange/cuda/topk_kernels.h"

namespace cohort {

class CudaTopKReducer final : public CudaBucketReducer {
 public:
  // INVALID_ARGUMENT for a bucket of 2^31 elements or more (the selection counts with int).
  static absl::StatusOr<std::unique_ptr<BucketReducer>> Create(
      CudaContext& context, double ratio, const std::vector<GradientBucket>& plan,
      CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;
  absl::Status Reset() override;
  // Every bucket's residual, in plan order.
  absl::StatusOr<std::string> SaveState() const override;

 protected:
  absl::Status LoadState(absl::string_view state) override;

 private:
  CudaTopKReducer(CudaContext& context, CollectiveBackend& backend)
      : CudaBucketReducer(context), backend_(backend) {}

  CollectiveBackend& backend_;
  std::vector<uint64_t> ks_;                    // per bucket
  std::vector<DeviceBuffer<float>> residuals_;  // per bucket
  DeviceBuffer<uint8_t> scratch_memory_;        // the selection's scratch, for the largest bucket
  DeviceBuffer<uint8_t> gathered_;              // size() messages of k indices then k values
  TopKScratch scratch_;                         // in scratch_memory_
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_TOPK_REDUCER_H_
