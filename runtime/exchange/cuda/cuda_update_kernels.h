// CudaUpdateKernels: DeviceUpdateKernels on one CUDA device, enqueueing the optimizer kernels
// (runtime/optim/cuda/optimizer_kernels.h) on the plugin's compute stream: after the plugin's
// backward kernels there, and, the exchange having finished each bucket before Reduce returned,
// after the summed gradients.
//
// Thread-safety: Step from one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_UPDATE_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_UPDATE_KERNELS_H_

#include "runtime/exchange/cuda/cuda_context.h"
#include "runtime/optim/device_update_kernels.h"

namespace cohort {

class CudaUpdateKernels final : public DeviceUpdateKernels {
 public:
  // `context` must outlive this object.
  explicit CudaUpdateKernels(const CudaContext& context) : context_(context) {}

  absl::Status Step(const OptimizerOptions& options, const DeviceBlockStep& block) override;

 private:
  const CudaContext& context_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_UPDATE_KERNELS_H_
