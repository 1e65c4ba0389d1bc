// Helpers shared by the optimizer tests: CPU arenas of float32/float64 tensors and typed access;
// device kernels that run the CPU rules on host memory posing as a device.
#ifndef COHORT_TEST_OPTIM_OPTIM_TEST_UTIL_H_
#define COHORT_TEST_OPTIM_OPTIM_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/optim/adam_optimizer.h"
#include "runtime/optim/device_update_kernels.h"
#include "runtime/optim/optimizer.h"
#include "runtime/optim/sgd_optimizer.h"

namespace cohort::optim_test {

template <class T>
inline constexpr cohort_dtype kDtypeOf =
    std::is_same_v<T, float> ? COHORT_DTYPE_FLOAT32 : COHORT_DTYPE_FLOAT64;

inline TensorDescriptor CpuTensor(std::string name, uint64_t count, cohort_dtype dtype) {
  return TensorDescriptor{std::move(name), dtype, {COHORT_DEVICE_CPU, 0}, count};
}

// A CPU arena of `specs`; null when TensorArena::Create refuses them (callers ASSERT on it).
inline std::unique_ptr<TensorArena> MakeArena(std::vector<TensorDescriptor> specs) {
  static CpuOnlyMemoryProvider memory;
  absl::StatusOr<std::unique_ptr<TensorArena>> arena =
      TensorArena::Create(std::move(specs), memory);
  return arena.ok() ? std::move(*arena) : nullptr;
}

// The CPU rules, run on the host memory that poses as the device (HostMemoryAsDevice), counting
// their calls; failing with `fail_with` when it is set.
class HostRuleKernels final : public DeviceUpdateKernels {
 public:
  absl::Status Step(const OptimizerOptions& options, const DeviceBlockStep& block) override {
    ++calls;
    if (!fail_with.ok()) return fail_with;
    if (block.dtype == COHORT_DTYPE_FLOAT64) {
      Apply<double>(options, block);
    } else {
      Apply<float>(options, block);
    }
    return absl::OkStatus();
  }

  int calls = 0;
  absl::Status fail_with;

 private:
  template <class T>
  static void Apply(const OptimizerOptions& options, const DeviceBlockStep& block) {
    BlockStep<T> step{static_cast<T*>(block.params),
                      static_cast<const T*>(block.grads),
                      {static_cast<T*>(block.buffers[0]), static_cast<T*>(block.buffers[1])},
                      block.count,
                      block.step};
    if (options.kind == OptimizerOptions::Kind::kSgd) {
      ApplySgdRule(step, options);
    } else {
      ApplyAdamRule(step, options);
    }
  }
};

template <class T>
T* Params(const TensorArena& arena, size_t tensor) {
  return static_cast<T*>(arena.data(tensor));
}

template <class T>
T* Grads(const TensorArena& arena, size_t tensor) {
  return static_cast<T*>(arena.grad(tensor));
}

template <class T>
void Fill(T* values, const std::vector<double>& from) {
  for (size_t i = 0; i < from.size(); ++i) values[i] = static_cast<T>(from[i]);
}

// How far a hand-computed expectation may be from the optimizer's result: a few units in the
// last place of T for values of magnitude ~1-3.
template <class T>
inline constexpr double kTolerance = std::is_same_v<T, float> ? 2e-6 : 1e-12;

// Runs one optimizer over a single tensor of T starting at `initial`, one step per entry of
// `grads`, and returns the parameters after each step; empty when the optimizer is refused.
template <class T>
std::vector<std::vector<double>> RunSteps(const OptimizerOptions& options,
                                          const std::vector<double>& initial,
                                          const std::vector<std::vector<double>>& grads) {
  std::unique_ptr<TensorArena> arena = MakeArena({CpuTensor("w", initial.size(), kDtypeOf<T>)});
  if (arena == nullptr) return {};
  absl::StatusOr<std::unique_ptr<Optimizer>> optimizer = Optimizer::Create(options, *arena);
  if (!optimizer.ok()) return {};
  Fill(Params<T>(*arena, 0), initial);
  std::vector<std::vector<double>> trajectory;
  for (const std::vector<double>& g : grads) {
    Fill(Grads<T>(*arena, 0), g);
    if (!(*optimizer)->Step().ok()) return {};
    trajectory.emplace_back(Params<T>(*arena, 0), Params<T>(*arena, 0) + initial.size());
  }
  return trajectory;
}

// Compares a trajectory from RunSteps with hand-computed parameters after each step.
template <class T>
void ExpectTrajectory(const std::vector<std::vector<double>>& actual,
                      const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(actual.size(), expected.size()) << "the optimizer was refused or failed a step";
  for (size_t step = 0; step < expected.size(); ++step) {
    ASSERT_EQ(actual[step].size(), expected[step].size());
    for (size_t i = 0; i < expected[step].size(); ++i) {
      EXPECT_NEAR(actual[step][i], expected[step][i], kTolerance<T>)
          << "after step " << step + 1 << ", element " << i;
    }
  }
}

}  // namespace cohort::optim_test

#endif  // COHORT_TEST_OPTIM_OPTIM_TEST_UTIL_H_
