// The built-in optimizers' update rules as CUDA kernels: one fused pass over a block of the
// device arena (parameters, gradients and the optimizer's buffers read once and written once),
// with 16-byte loads and stores where every array allows them. Each rule repeats the CPU rule of
// sgd_optimizer.cc or adam_optimizer.cc operation for operation, in the block's precision, with
// every multiplication, division, addition and square root rounded on its own (no fused
// multiply-add), and its step-dependent scalars computed on the host as the CPU computes them;
// so a device step produces the CPU's bits.
//
//   DeviceBlock<float> block{params, grads, {velocity, nullptr}, count, step};
//   cudaError_t e = EnqueueSgdStep(block, SgdSettings::From(options), stream);
//
// The functions return the launch error (cudaSuccess once enqueued; a fault inside a kernel
// shows at the next synchronization). They keep no state: safe from any thread.
#ifndef COHORT_RUNTIME_OPTIM_CUDA_OPTIMIZER_KERNELS_H_
#define COHORT_RUNTIME_OPTIM_CUDA_OPTIMIZER_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cohort {

// One arena block during one step, every pointer in device memory and `count` elements long.
template <class T>
struct DeviceBlock {
  T* params;
  const T* grads;
  T* buffers[2];  // SGD: velocity (momentum > 0 only); Adam: first and second moments
  uint64_t count;
  uint64_t step;  // 1 on the first step
};

// OptimizerOptions' fields for SGD (plain C++ so nvcc need not see the options' headers).
struct SgdSettings {
  double learning_rate = 0;
  double weight_decay = 0;
  double momentum = 0;
  bool nesterov = false;
};

// OptimizerOptions' fields for Adam and AdamW (`decoupled`: AdamW's weight decay).
struct AdamSettings {
  double learning_rate = 0;
  double weight_decay = 0;
  double beta1 = 0;
  double beta2 = 0;
  double eps = 0;
  bool decoupled = false;
};

cudaError_t EnqueueSgdStep(const DeviceBlock<float>& block, const SgdSettings& settings,
                           cudaStream_t stream);
cudaError_t EnqueueSgdStep(const DeviceBlock<double>& block, const SgdSettings& settings,
                           cudaStream_t stream);
cudaError_t EnqueueAdamStep(const DeviceBlock<float>& block, const AdamSettings& settings,
                            cudaStream_t stream);
cudaError_t EnqueueAdamStep(const DeviceBlock<double>& block, const AdamSettings& settings,
                            cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_CUDA_OPTIMIZER_KERNELS_H_
