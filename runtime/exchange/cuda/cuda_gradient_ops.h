// CudaGradientOps: DeviceGradientOps (runtime/arena/device_gradient_ops.h) on one CUDA device,
// enqueueing on the plugin's compute stream (gradient_kernels.h). The non-finite checks set one
// flag in device memory; TakeNonFinite reads it back through pinned memory (4 bytes) and clears
// it, the only wait.
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_GRADIENT_OPS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_GRADIENT_OPS_H_

#include <cstdint>

#include "runtime/arena/device_gradient_ops.h"
#include "runtime/exchange/cuda/cuda_context.h"

namespace cohort {

class CudaGradientOps final : public DeviceGradientOps {
 public:
  // `context` must outlive this object.
  explicit CudaGradientOps(const CudaContext& context) : context_(context) {}
  ~CudaGradientOps() override;
  CudaGradientOps(const CudaGradientOps&) = delete;
  CudaGradientOps& operator=(const CudaGradientOps&) = delete;

  absl::Status Divide(void* grad, cohort_dtype dtype, uint64_t count, uint64_t divisor) override;
  absl::Status CheckFinite(const void* grad, cohort_dtype dtype, uint64_t count) override;
  absl::StatusOr<bool> TakeNonFinite() override;

 private:
  // Allocates the flag (zeroed) and its pinned host copy on first use.
  absl::Status EnsureFlag();

  const CudaContext& context_;
  uint32_t* flag_ = nullptr;       // device memory
  uint32_t* host_flag_ = nullptr;  // pinned
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_GRADIENT_OPS_H_
