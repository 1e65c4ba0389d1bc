// CudaPowerSgdReducer: PowerSGD on the device, the counterpart of PowerSgdReducer. Buckets are
// laid out and seeded as the CPU compressor does it (powersgd_layout.h): the same tensors are
// compressed, P and Q have the same layouts, and the starting Q is the same draw. The products
// with M run through cuBLAS on the communication stream and Gram-Schmidt in one block per matrix,
// in double, so results match the CPU's to rounding (the summation order differs), not bit for
// bit. For the first `start_iter` optimizer steps buckets are summed exactly. Error feedback and
// the warm-start Q live in device memory; checkpoints keep them (SaveState).
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_POWERSGD_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_POWERSGD_REDUCER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/exchange/compression/powersgd/powersgd_layout.h"
#include "runtime/exchange/cuda/cuda_bucket_reducer.h"
#include "runtime/exchange/cuda/device_buffer.h"

namespace cohort {

class CudaPowerSgdReducer final : public CudaBucketReducer {
 public:
  // `tensors[b]` are bucket b's tensors. INVALID_ARGUMENT for a matrix dimension of 2^31 or more.
  static absl::StatusOr<std::unique_ptr<BucketReducer>> Create(
      CudaContext& context, uint32_t rank, uint64_t start_iter,
      const std::vector<GradientBucket>& plan,
      const std::vector<std::vector<PowerSgdTensor>>& tensors, CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;
  absl::Status Reset() override;
  // Every bucket's starting Q and error, in plan order.
  absl::StatusOr<std::string> SaveState() const override;

 protected:
  absl::Status LoadState(absl::string_view state) override;

 private:
  struct BucketState {
    PowerSgdLayout layout;
    DeviceBuffer<float> q;        // the starting Q of the next step
    DeviceBuffer<float> start_q;  // the seeded draw, for a column that vanishes
    DeviceBuffer<float> own_q;    // this rank's Q of the current step, before the sum
    DeviceBuffer<float> error;
  };

  CudaPowerSgdReducer(CudaContext& context, uint64_t start_iter, CollectiveBackend& backend)
      : CudaBucketReducer(context), start_iter_(start_iter), backend_(backend) {}

  absl::Status Compress(BucketState& state, float* grad);

  const uint64_t start_iter_;
  CollectiveBackend& backend_;
  std::vector<BucketState> buckets_;
  DeviceBuffer<float> first_;   // every P, then the uncompressed values (largest bucket)
  DeviceBuffer<float> second_;  // every Q (largest bucket)
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_POWERSGD_REDUCER_H_
