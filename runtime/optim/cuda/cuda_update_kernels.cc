// The CUDA optimizer module (cuda_optimizer_module.h): CudaUpdateKernels and the module's entry.
#include "runtime/optim/cuda/cuda_update_kernels.h"

#include <cstdio>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/module/cuda_status.h"
#include "runtime/optim/cuda/cuda_optimizer_module.h"
#include "runtime/optim/cuda/optimizer_kernels.h"

namespace cohort {
namespace {

template <class T>
DeviceBlock<T> Typed(const DeviceBlockStep& block) {
  return DeviceBlock<T>{static_cast<T*>(block.params),
                        static_cast<const T*>(block.grads),
                        {static_cast<T*>(block.buffers[0]), static_cast<T*>(block.buffers[1])},
                        block.count,
                        block.step};
}

template <class T>
cudaError_t Enqueue(const OptimizerOptions& options, const DeviceBlockStep& block,
                    cudaStream_t stream) {
  if (options.kind == OptimizerOptions::Kind::kSgd) {
    const SgdSettings settings{options.learning_rate, options.weight_decay, options.momentum,
                               options.nesterov};
    return EnqueueSgdStep(Typed<T>(block), settings, stream);
  }
  const AdamSettings settings{
      options.learning_rate, options.weight_decay, options.beta1,
      options.beta2,         options.eps,          options.kind == OptimizerOptions::Kind::kAdamW};
  return EnqueueAdamStep(Typed<T>(block), settings, stream);
}

}  // namespace

absl::Status CudaUpdateKernels::Step(const OptimizerOptions& options,
                                     const DeviceBlockStep& block) {
  if (absl::Status s = CudaStatus(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  if (block.dtype != COHORT_DTYPE_FLOAT32 && block.dtype != COHORT_DTYPE_FLOAT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("the optimizer kernels take float32 and float64, not dtype ", block.dtype));
  }
  const cudaError_t enqueued = block.dtype == COHORT_DTYPE_FLOAT64
                                   ? Enqueue<double>(options, block, stream_)
                                   : Enqueue<float>(options, block, stream_);
  return CudaStatus(enqueued, "enqueueing the optimizer step");
}

}  // namespace cohort

extern "C" __attribute__((visibility("default"))) cohort::DeviceUpdateKernels*
cohort_cuda_update_kernels_open(int device, void* stream, char* error, size_t error_len) {
  int count = 0;
  absl::Status usable = cohort::CudaStatus(cudaGetDeviceCount(&count), "no usable CUDA device");
  if (usable.ok() && (device < 0 || device >= count)) {
    usable = absl::UnavailableError(
        absl::StrCat("CUDA device ", device, " does not exist; this process sees ", count));
  }
  if (!usable.ok()) {
    std::snprintf(error, error_len, "%s", std::string(usable.message()).c_str());
    return nullptr;
  }
  return new cohort::CudaUpdateKernels(device, static_cast<cudaStream_t>(stream));
}
static_assert(
    std::is_same_v<decltype(&cohort_cuda_update_kernels_open), cohort_cuda_update_kernels_open_fn>);
