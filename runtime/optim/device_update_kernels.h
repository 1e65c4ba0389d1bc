// DeviceUpdateKernels: the built-in optimizers' update rules run on a device, one arena block at
// a time, for DeviceArenaOptimizer. The CUDA implementation lives in the CUDA optimizer module
// (OpenCudaUpdateKernels), whose kernels repeat the CPU rules operation for operation; tests give
// an implementation that runs the CPU rules on host memory posing as a device.
//
// Thread-safety: as the implementation says; DeviceArenaOptimizer calls it from one thread.
#ifndef COHORT_RUNTIME_OPTIM_DEVICE_UPDATE_KERNELS_H_
#define COHORT_RUNTIME_OPTIM_DEVICE_UPDATE_KERNELS_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cohort/plugin.h"
#include "runtime/optim/optimizer_options.h"

namespace cohort {

// One block during one step, every pointer in the device's memory and `count` elements of
// `dtype` (float32 or float64) long.
struct DeviceBlockStep {
  cohort_dtype dtype = COHORT_DTYPE_FLOAT32;
  void* params = nullptr;
  const void* grads = nullptr;
  void* buffers[2] = {nullptr, nullptr};  // as the rule needs: SGD's velocity, Adam's moments
  uint64_t count = 0;
  uint64_t step = 0;  // 1 on the first step
};

class DeviceUpdateKernels {
 public:
  virtual ~DeviceUpdateKernels() = default;

  // Enqueues one step of `options`' rule over `block` on the device, after the work already
  // enqueued there (the gradients' last writes) and before any later copy of the block to the
  // host (DeviceMemory::CopyToHost waits for it). An error when it cannot be enqueued.
  virtual absl::Status Step(const OptimizerOptions& options, const DeviceBlockStep& block) = 0;
};

// Loads the CUDA optimizer module (at $COHORT_CUDA_OPTIMIZER_MODULE, then in the build tree, then
// in the install tree) and opens its kernels on CUDA device `device`, enqueueing on `stream` (a
// cudaStream_t of that device that outlives them: the plugin's compute stream). UNAVAILABLE where
// the module or the device is missing, with the reason.
absl::StatusOr<std::unique_ptr<DeviceUpdateKernels>> OpenCudaUpdateKernels(int device,
                                                                           void* stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_DEVICE_UPDATE_KERNELS_H_
