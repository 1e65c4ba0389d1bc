// CudaUpdateKernels: DeviceUpdateKernels on one CUDA device, enqueueing the optimizer kernels
// (optimizer_kernels.h) on the stream the plugin's work runs on (DeviceExchange::compute_stream):
// after the plugin's backward kernels there and, the exchange having finished each bucket before
// Reduce returned, after the summed gradients.
//
// Thread-safety: Step from one thread at a time.
#ifndef COHORT_RUNTIME_OPTIM_CUDA_CUDA_UPDATE_KERNELS_H_
#define COHORT_RUNTIME_OPTIM_CUDA_CUDA_UPDATE_KERNELS_H_

#include <cuda_runtime_api.h>

#include "runtime/optim/device_update_kernels.h"

namespace cohort {

class CudaUpdateKernels final : public DeviceUpdateKernels {
 public:
  // `stream` belongs to `device` and must outlive this object.
  CudaUpdateKernels(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

  absl::Status Step(const OptimizerOptions& options, const DeviceBlockStep& block) override;

 private:
  int device_;
  cudaStream_t stream_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_CUDA_CUDA_UPDATE_KERNELS_H_
