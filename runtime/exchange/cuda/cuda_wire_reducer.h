// CudaWireReducer: buckets of device gradients summed by the engine (NCCL) in float32, float16 or
// bfloat16, the device counterpart of DenseReducer and of CodecReducer's fp16 form. float32 is
// scaled in place and summed in place; a 16-bit form is scaled and encoded in one kernel into a
// wire buffer, summed there by NCCL (which adds both 16-bit formats on the device), and decoded
// back into the bucket. Unlike the CPU's bf16 form (gathered, then added in float32 on the host,
// because Gloo cannot add bf16), NCCL adds bf16 itself, as DDP's bf16 hook lets it.
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_WIRE_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_WIRE_REDUCER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/exchange/cuda/cuda_bucket_reducer.h"
#include "runtime/exchange/cuda/device_buffer.h"
#include "runtime/exchange/cuda/exchange_kernels.h"

namespace cohort {

class CudaWireReducer final : public CudaBucketReducer {
 public:
  // `format` empty: float32. `backend` runs on context.communication.
  static absl::StatusOr<std::unique_ptr<BucketReducer>> Create(
      CudaContext& context, std::optional<WireFormat> format,
      const std::vector<GradientBucket>& plan, CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;

 private:
  CudaWireReducer(CudaContext& context, std::optional<WireFormat> format,
                  CollectiveBackend& backend)
      : CudaBucketReducer(context), format_(format), backend_(backend) {}

  const std::optional<WireFormat> format_;
  CollectiveBackend& backend_;
  DeviceBuffer<uint16_t> wire_;  // the largest bucket, for the 16-bit forms
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_WIRE_REDUCER_H_
