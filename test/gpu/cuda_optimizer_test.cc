// The optimizer kernels (runtime/optim/cuda) against the built-in CPU optimizers: every rule and
// setting, float32 and float64, over 5 steps, on arrays that take the 16-byte path (with a tail)
// and arrays one element off alignment (the element-by-element path). The parameters after each
// step must be bitwise the CPU's. Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/optim/cuda/optimizer_kernels.h"
#include "runtime/optim/optimizer.h"

namespace cohort {
namespace {

constexpr int kSteps = 5;

template <class T>
constexpr cohort_dtype kDtype =
    std::is_same_v<T, float> ? COHORT_DTYPE_FLOAT32 : COHORT_DTYPE_FLOAT64;

// Deterministic values in about [-2, 2), different for every (seed, index).
template <class T>
std::vector<T> Values(uint64_t seed, uint64_t count) {
  std::vector<T> values(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (T& value : values) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    value = static_cast<T>(static_cast<double>((state * 0x2545F4914F6CDD1Dull) >> 11) /
                               static_cast<double>(1ull << 53) * 4.0 -
                           2.0);
  }
  return values;
}

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << cudaGetErrorString(cudaGetLastError())

// Device arrays freed at the end of the test.
class DeviceArrays {
 public:
  ~DeviceArrays() {
    for (void* pointer : pointers_) cudaFree(pointer);
  }
  template <class T>
  T* Zeroed(uint64_t count) {
    void* pointer = nullptr;
    if (cudaMalloc(&pointer, count * sizeof(T)) != cudaSuccess) return nullptr;
    pointers_.push_back(pointer);
    cudaMemset(pointer, 0, count * sizeof(T));
    return static_cast<T*>(pointer);
  }

 private:
  std::vector<void*> pointers_;
};

template <class T>
void ExpectDeviceStepsMatchTheCpu(const OptimizerOptions& options, uint64_t count,
                                  uint64_t misalign) {
  static CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(
      {TensorDescriptor{"w", kDtype<T>, {COHORT_DEVICE_CPU, 0}, count}}, memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  absl::StatusOr<std::unique_ptr<Optimizer>> cpu = Optimizer::Create(options, **arena);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  T* cpu_params = static_cast<T*>((*arena)->data(0));
  T* cpu_grads = static_cast<T*>((*arena)->grad(0));

  DeviceArrays arrays;
  DeviceBlock<T> block{};
  T* params_base = arrays.Zeroed<T>(count + misalign);
  T* grads_base = arrays.Zeroed<T>(count + misalign);
  T* first_base = arrays.Zeroed<T>(count + misalign);
  T* second_base = arrays.Zeroed<T>(count + misalign);
  ASSERT_TRUE(params_base && grads_base && first_base && second_base);
  block.params = params_base + misalign;
  block.grads = grads_base + misalign;
  block.buffers[0] = first_base + misalign;
  block.buffers[1] = second_base + misalign;
  block.count = count;

  const std::vector<T> initial = Values<T>(1, count);
  std::memcpy(cpu_params, initial.data(), count * sizeof(T));
  ASSERT_CUDA(cudaMemcpy(block.params, initial.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  const SgdSettings sgd{options.learning_rate, options.weight_decay, options.momentum,
                        options.nesterov};
  const AdamSettings adam{options.learning_rate, options.weight_decay,
                          options.beta1,         options.beta2,
                          options.eps,           options.kind == OptimizerOptions::Kind::kAdamW};
  std::vector<T> device_params(count);
  for (int step = 1; step <= kSteps; ++step) {
    const std::vector<T> grads = Values<T>(100 + step, count);
    std::memcpy(cpu_grads, grads.data(), count * sizeof(T));
    ASSERT_TRUE((*cpu)->Step().ok());
    ASSERT_CUDA(cudaMemcpy(const_cast<T*>(block.grads), grads.data(), count * sizeof(T),
                           cudaMemcpyHostToDevice));
    block.step = static_cast<uint64_t>(step);
    ASSERT_CUDA(options.kind == OptimizerOptions::Kind::kSgd
                    ? EnqueueSgdStep(block, sgd, nullptr)
                    : EnqueueAdamStep(block, adam, nullptr));
    ASSERT_CUDA(cudaDeviceSynchronize());
    ASSERT_CUDA(
        cudaMemcpy(device_params.data(), block.params, count * sizeof(T), cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < count; ++i) {
      if (std::memcmp(&device_params[i], &cpu_params[i], sizeof(T)) != 0) {
        FAIL() << "step " << step << ", element " << i << ": device " << device_params[i]
               << ", CPU " << cpu_params[i];
      }
    }
  }
}

OptimizerOptions Sgd(double momentum, bool nesterov, double weight_decay) {
  OptimizerOptions options;
  options.learning_rate = 0.05;
  options.momentum = momentum;
  options.nesterov = nesterov;
  options.weight_decay = weight_decay;
  return options;
}

OptimizerOptions Adam(OptimizerOptions::Kind kind, double weight_decay) {
  OptimizerOptions options;
  options.kind = kind;
  options.learning_rate = 0.001;
  options.weight_decay = weight_decay;
  return options;
}

std::vector<OptimizerOptions> EveryRule() {
  return {Sgd(0, false, 0),
          Sgd(0, false, 0.01),
          Sgd(0.9, false, 0),
          Sgd(0.9, true, 0.01),
          Adam(OptimizerOptions::Kind::kAdam, 0),
          Adam(OptimizerOptions::Kind::kAdam, 0.01),
          Adam(OptimizerOptions::Kind::kAdamW, 0.01)};
}

// 2^20 + 3 elements: whole 16-byte groups and a tail; then the same one element off alignment.
constexpr uint64_t kCount = (1u << 20) + 3;

TEST(CudaOptimizerTest, Float32StepsAreTheCpusBits) {
  for (const OptimizerOptions& options : EveryRule()) {
    for (uint64_t misalign : {0u, 1u}) {
      SCOPED_TRACE(std::string(OptimizerKindName(options.kind)) + " momentum " +
                   std::to_string(options.momentum) + " weight decay " +
                   std::to_string(options.weight_decay) + " misaligned by " +
                   std::to_string(misalign));
      ExpectDeviceStepsMatchTheCpu<float>(options, kCount, misalign);
    }
  }
}

TEST(CudaOptimizerTest, Float64StepsAreTheCpusBits) {
  for (const OptimizerOptions& options : EveryRule()) {
    for (uint64_t misalign : {0u, 1u}) {
      SCOPED_TRACE(std::string(OptimizerKindName(options.kind)) + " misaligned by " +
                   std::to_string(misalign));
      ExpectDeviceStepsMatchTheCpu<double>(options, kCount, misalign);
    }
  }
}

TEST(CudaOptimizerTest, AnEmptyBlockEnqueuesNothing) {
  DeviceBlock<float> block{};
  EXPECT_EQ(EnqueueSgdStep(block, SgdSettings{0.1, 0, 0, false}, nullptr), cudaSuccess);
  EXPECT_EQ(EnqueueAdamStep(block, AdamSettings{0.1, 0, 0.9, 0.999, 1e-8, false}, nullptr),
            cudaSuccess);
}

}  // namespace
}  // namespace cohort
