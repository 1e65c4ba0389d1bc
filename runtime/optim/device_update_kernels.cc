#include "runtime/optim/device_update_kernels.h"

#include "runtime/module/runtime_module.h"
#include "runtime/optim/cuda/cuda_optimizer_module.h"

namespace cohort {

absl::StatusOr<std::unique_ptr<DeviceUpdateKernels>> OpenCudaUpdateKernels(int device,
                                                                           void* stream) {
  absl::StatusOr<void*> entry =
      RuntimeModuleEntry(RuntimeModuleId::kCudaOptimizer, COHORT_CUDA_UPDATE_KERNELS_OPEN_SYMBOL);
  if (!entry.ok()) return entry.status();
  auto open = reinterpret_cast<cohort_cuda_update_kernels_open_fn>(*entry);
  char error[1024] = {};
  DeviceUpdateKernels* kernels = open(device, stream, error, sizeof error);
  if (kernels == nullptr) return absl::UnavailableError(error);
  return std::unique_ptr<DeviceUpdateKernels>(kernels);
}

}  // namespace cohort
