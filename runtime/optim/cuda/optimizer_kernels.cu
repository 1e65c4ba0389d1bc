#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/optim/cuda/optimizer_kernels.h"

namespace cohort {
namespace {

constexpr unsigned kThreads = 256;
constexpr uint64_t kMaxBlocks = 1 << 16;

// Elements per 16-byte access.
template <class T>
constexpr unsigned kLanes = 16 / sizeof(T);

// Blocks for a grid-stride loop over `count` elements.
unsigned BlocksFor(uint64_t count) {
  return static_cast<unsigned>(
      std::max<uint64_t>(1, std::min(kMaxBlocks, (count + kThreads - 1) / kThreads)));
}

// Arithmetic rounded one operation at a time, as the CPU rounds it.
__device__ float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ float Sub(float a, float b) { return __fsub_rn(a, b); }
__device__ float Div(float a, float b) { return __fdiv_rn(a, b); }
__device__ float Sqrt(float a) { return __fsqrt_rn(a); }
__device__ double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ double Add(double a, double b) { return __dadd_rn(a, b); }
__device__ double Sub(double a, double b) { return __dsub_rn(a, b); }
__device__ double Div(double a, double b) { return __ddiv_rn(a, b); }
__device__ double Sqrt(double a) { return __dsqrt_rn(a); }

// The SGD scalars in T, as SgdUpdate casts them.
template <class T>
struct SgdScalars {
  T lr, weight_decay, momentum;
  bool decay, use_momentum, first, nesterov;
};

// SgdUpdate's body for element i.
template <class T>
__device__ void SgdElement(const SgdScalars<T>& s, T& param, T grad, T& velocity) {
  T g = grad;
  if (s.decay) g = Add(g, Mul(s.weight_decay, param));
  if (!s.use_momentum) {
    param = Sub(param, Mul(s.lr, g));
    return;
  }
  const T buf = s.first ? g : Add(Mul(s.momentum, velocity), g);
  velocity = buf;
  param = Sub(param, Mul(s.lr, s.nesterov ? Add(g, Mul(s.momentum, buf)) : buf));
}

// The Adam scalars in T, as AdamUpdate computes and casts them.
template <class T>
struct AdamScalars {
  T shrink_factor, l2_factor, beta1, one_minus_beta1, beta2, one_minus_beta2, step_size,
      bias_correction2_sqrt, eps;
  bool shrink, l2;
};

// AdamUpdate's body for element i.
template <class T>
__device__ void AdamElement(const AdamScalars<T>& s, T& param, T grad, T& exp_avg, T& exp_avg_sq) {
  T p = param;
  if (s.shrink) p = Mul(p, s.shrink_factor);
  T g = grad;
  if (s.l2) g = Add(g, Mul(s.l2_factor, p));
  const T m = Add(Mul(s.beta1, exp_avg), Mul(s.one_minus_beta1, g));
  const T v = Add(Mul(s.beta2, exp_avg_sq), Mul(Mul(s.one_minus_beta2, g), g));
  exp_avg = m;
  exp_avg_sq = v;
  param = Sub(p, Mul(s.step_size, Div(m, Add(Div(Sqrt(v), s.bias_correction2_sqrt), s.eps))));
}

// 16 bytes of T, loaded and stored at once.
template <class T>
struct alignas(16) Lanes {
  T v[kLanes<T>];
};

template <class T>
__device__ Lanes<T> Load(const T* base, uint64_t group) {
  return reinterpret_cast<const Lanes<T>*>(base)[group];
}
template <class T>
__device__ void Store(T* base, uint64_t group, const Lanes<T>& lanes) {
  reinterpret_cast<Lanes<T>*>(base)[group] = lanes;
}

__device__ uint64_t FirstIndex() {
  return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
}
__device__ uint64_t Stride() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }

// SGD as a rule over one element: `first` is the velocity (when momentum is on).
template <class T>
struct SgdRule {
  SgdScalars<T> s;
  __device__ bool Reads(int buffer) const { return buffer == 0 && s.use_momentum && !s.first; }
  __device__ bool Writes(int buffer) const { return buffer == 0 && s.use_momentum; }
  __device__ void operator()(T& param, T grad, T& first, T&) const {
    SgdElement(s, param, grad, first);
  }
};

// Adam as a rule over one element: `first` and `second` are the moments.
template <class T>
struct AdamRule {
  AdamScalars<T> s;
  __device__ bool Reads(int) const { return true; }
  __device__ bool Writes(int) const { return true; }
  __device__ void operator()(T& param, T grad, T& first, T& second) const {
    AdamElement(s, param, grad, first, second);
  }
};

// One pass of `rule` over the block. `vectorized`: every array is 16-byte aligned, so groups of
// kLanes elements move as one access each, and the tail element by element.
template <class T, class Rule>
__global__ void StepKernel(DeviceBlock<T> block, Rule rule, bool vectorized) {
  uint64_t scalar_from = 0;
  if (vectorized) {
    const uint64_t groups = block.count / kLanes<T>;
    for (uint64_t group = FirstIndex(); group < groups; group += Stride()) {
      Lanes<T> params = Load(block.params, group);
      const Lanes<T> grads = Load(block.grads, group);
      Lanes<T> buffers[2] = {};
      for (int b = 0; b < 2; ++b) {
        if (rule.Reads(b)) buffers[b] = Load<T>(block.buffers[b], group);
      }
      for (unsigned lane = 0; lane < kLanes<T>; ++lane) {
        rule(params.v[lane], grads.v[lane], buffers[0].v[lane], buffers[1].v[lane]);
      }
      Store(block.params, group, params);
      for (int b = 0; b < 2; ++b) {
        if (rule.Writes(b)) Store(block.buffers[b], group, buffers[b]);
      }
    }
    scalar_from = groups * kLanes<T>;
  }
  for (uint64_t i = scalar_from + FirstIndex(); i < block.count; i += Stride()) {
    T buffers[2] = {};
    for (int b = 0; b < 2; ++b) {
      if (rule.Reads(b)) buffers[b] = block.buffers[b][i];
    }
    rule(block.params[i], block.grads[i], buffers[0], buffers[1]);
    for (int b = 0; b < 2; ++b) {
      if (rule.Writes(b)) block.buffers[b][i] = buffers[b];
    }
  }
}

bool Aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

template <class T>
cudaError_t EnqueueSgd(const DeviceBlock<T>& block, const SgdSettings& settings,
                       cudaStream_t stream) {
  if (block.count == 0) return cudaSuccess;
  SgdScalars<T> s;
  s.lr = static_cast<T>(settings.learning_rate);
  s.weight_decay = static_cast<T>(settings.weight_decay);
  s.momentum = static_cast<T>(settings.momentum);
  s.decay = settings.weight_decay != 0;
  s.use_momentum = settings.momentum != 0;
  s.first = block.step == 1;
  s.nesterov = settings.nesterov;
  const bool vectorized = Aligned16(block.params) && Aligned16(block.grads) &&
                          (!s.use_momentum || Aligned16(block.buffers[0]));
  const uint64_t work = vectorized ? block.count / kLanes<T> : block.count;
  StepKernel<<<BlocksFor(work), kThreads, 0, stream>>>(block, SgdRule<T>{s}, vectorized);
  return cudaGetLastError();
}

template <class T>
cudaError_t EnqueueAdam(const DeviceBlock<T>& block, const AdamSettings& settings,
                        cudaStream_t stream) {
  if (block.count == 0) return cudaSuccess;
  const double t = static_cast<double>(block.step);
  const double lr = settings.learning_rate, wd = settings.weight_decay;
  AdamScalars<T> s;
  s.shrink = settings.decoupled && wd != 0;
  s.l2 = !settings.decoupled && wd != 0;
  s.shrink_factor = static_cast<T>(1 - lr * wd);
  s.l2_factor = static_cast<T>(wd);
  s.beta1 = static_cast<T>(settings.beta1);
  s.one_minus_beta1 = static_cast<T>(1 - settings.beta1);
  s.beta2 = static_cast<T>(settings.beta2);
  s.one_minus_beta2 = static_cast<T>(1 - settings.beta2);
  s.step_size = static_cast<T>(lr / (1 - std::pow(settings.beta1, t)));
  s.bias_correction2_sqrt = static_cast<T>(std::sqrt(1 - std::pow(settings.beta2, t)));
  s.eps = static_cast<T>(settings.eps);
  const bool vectorized = Aligned16(block.params) && Aligned16(block.grads) &&
                          Aligned16(block.buffers[0]) && Aligned16(block.buffers[1]);
  const uint64_t work = vectorized ? block.count / kLanes<T> : block.count;
  StepKernel<<<BlocksFor(work), kThreads, 0, stream>>>(block, AdamRule<T>{s}, vectorized);
  return cudaGetLastError();
}

}  // namespace

cudaError_t EnqueueSgdStep(const DeviceBlock<float>& block, const SgdSettings& settings,
                           cudaStream_t stream) {
  return EnqueueSgd(block, settings, stream);
}
cudaError_t EnqueueSgdStep(const DeviceBlock<double>& block, const SgdSettings& settings,
                           cudaStream_t stream) {
  return EnqueueSgd(block, settings, stream);
}
cudaError_t EnqueueAdamStep(const DeviceBlock<float>& block, const AdamSettings& settings,
                            cudaStream_t stream) {
  return EnqueueAdam(block, settings, stream);
}
cudaError_t EnqueueAdamStep(const DeviceBlock<double>& block, const AdamSettings& settings,
                            cudaStream_t stream) {
  return EnqueueAdam(block, settings, stream);
}

}  // namespace cohort
