#include "runtime/exchange/cuda/cuda_update_kernels.h"

#include "absl/strings/str_cat.h"
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
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  if (block.dtype != COHORT_DTYPE_FLOAT32 && block.dtype != COHORT_DTYPE_FLOAT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("the optimizer kernels take float32 and float64, not dtype ", block.dtype));
  }
  const cudaError_t enqueued = block.dtype == COHORT_DTYPE_FLOAT64
                                   ? Enqueue<double>(options, block, context_.compute)
                                   : Enqueue<float>(options, block, context_.compute);
  return CudaStatus(enqueued, "enqueueing the optimizer step");
}

}  // namespace cohort
