// DeviceArenaOptimizer on host memory posing as cuda:0, with kernels that run the CPU rules there:
// what the device optimizer itself decides (its buffers, step count, calls per block and its
// saved state) must match the CPU optimizer bit for bit, and a checkpoint must move between them.
// The CUDA kernels' own bits are checked on a GPU (test/gpu/cuda_optimizer_test.cc).
#include "runtime/optim/device_arena_optimizer.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/optim/adam_optimizer.h"
#include "runtime/optim/optimizer_state.h"
#include "runtime/optim/sgd_optimizer.h"
#include "test/common/host_memory_as_device.h"
#include "test/optim/optim_test_util.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using Kind = OptimizerOptions::Kind;

using optim_test::HostRuleKernels;

OptimizerOptions Rule(Kind kind, double momentum, bool nesterov, double weight_decay) {
  OptimizerOptions options;
  options.kind = kind;
  options.learning_rate = kind == Kind::kSgd ? 0.05 : 0.002;
  options.momentum = momentum;
  options.nesterov = nesterov;
  options.weight_decay = weight_decay;
  return options;
}

std::vector<OptimizerOptions> EveryRule() {
  return {Rule(Kind::kSgd, 0, false, 0), Rule(Kind::kSgd, 0.9, true, 0.01),
          Rule(Kind::kSgd, 0.5, false, 0), Rule(Kind::kAdam, 0, false, 0.01),
          Rule(Kind::kAdamW, 0, false, 0.01)};
}

// Two tensors of `dtype` on `device`.
std::vector<TensorDescriptor> Tensors(cohort_device device, cohort_dtype dtype) {
  return {{"w", dtype, device, 37}, {"b", dtype, device, 5}};
}

// Deterministic bytes for a part of every block: step s gives other values.
void FillBlocks(const TensorArena& arena, BlockPart part, int seed) {
  for (const ArenaBlock& block : arena.blocks()) {
    std::vector<double> values(block.element_count);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] =
          static_cast<double>((i * 7919 + static_cast<size_t>(seed) * 104729) % 2003) / 1000.0 -
          1.0;
    }
    std::vector<char> bytes(BlockBytes(block));
    for (size_t i = 0; i < values.size(); ++i) {
      if (block.dtype == COHORT_DTYPE_FLOAT64) {
        reinterpret_cast<double*>(bytes.data())[i] = values[i];
      } else {
        reinterpret_cast<float*>(bytes.data())[i] = static_cast<float>(values[i]);
      }
    }
    ASSERT_TRUE(CopyBlockFromHost(block, part, bytes.data()).ok());
  }
}

std::string Parameters(const TensorArena& arena) {
  std::string bytes;
  for (const ArenaBlock& block : arena.blocks()) {
    std::string part(BlockBytes(block), '\0');
    EXPECT_TRUE(CopyBlockToHost(block, BlockPart::kParameters, part.data()).ok());
    bytes += part;
  }
  return bytes;
}

void SetParameters(const TensorArena& arena, const std::string& bytes) {
  size_t at = 0;
  for (const ArenaBlock& block : arena.blocks()) {
    ASSERT_TRUE(CopyBlockFromHost(block, BlockPart::kParameters, bytes.data() + at).ok());
    at += BlockBytes(block);
  }
}

// Adam at a learning rate of 0.01.
OptimizerOptions Adam() {
  OptimizerOptions options;
  options.kind = Kind::kAdam;
  options.learning_rate = 0.01;
  return options;
}

// A CPU arena and a device arena of the same tensors, with the same starting parameters.
struct Twins {
  testing::HostMemoryAsDevice memory;
  std::unique_ptr<TensorArena> cpu, device;
  HostRuleKernels kernels;  // the device optimizer's

  explicit Twins(cohort_dtype dtype) {
    cpu = *TensorArena::Create(Tensors({COHORT_DEVICE_CPU, 0}, dtype), memory);
    device = *TensorArena::Create(Tensors({COHORT_DEVICE_CUDA, 0}, dtype), memory);
    FillBlocks(*cpu, BlockPart::kParameters, 0);
    FillBlocks(*device, BlockPart::kParameters, 0);
  }

  // `options`' optimizer on each arena, the device's stepping through `kernels`.
  struct Optimizers {
    absl::StatusOr<std::unique_ptr<Optimizer>> on_cpu, on_device;
  };
  Optimizers Create(const OptimizerOptions& options) {
    return {Optimizer::Create(options, *cpu), Optimizer::Create(options, *device, &kernels)};
  }

  // `steps` steps of both optimizers with the same gradients, from gradient seed `first`.
  void Step(Optimizer& on_cpu, Optimizer& on_device, int first, int steps) {
    for (int s = first; s < first + steps; ++s) {
      FillBlocks(*cpu, BlockPart::kGradients, s);
      FillBlocks(*device, BlockPart::kGradients, s);
      ASSERT_TRUE(on_cpu.Step().ok());
      ASSERT_TRUE(on_device.Step().ok());
    }
  }
};

TEST(DeviceArenaOptimizerTest, EveryRuleStepsAsTheCpuOptimizerOneCallPerBlock) {
  for (cohort_dtype dtype : {COHORT_DTYPE_FLOAT32, COHORT_DTYPE_FLOAT64}) {
    for (const OptimizerOptions& options : EveryRule()) {
      SCOPED_TRACE(std::string(OptimizerKindName(options.kind)) + " momentum " +
                   std::to_string(options.momentum) +
                   (dtype == COHORT_DTYPE_FLOAT64 ? " f64" : " f32"));
      Twins twins(dtype);
      auto [on_cpu, on_device] = twins.Create(options);
      ASSERT_TRUE(on_cpu.ok() && on_device.ok()) << on_device.status();
      twins.Step(**on_cpu, **on_device, 1, 4);
      EXPECT_EQ(Parameters(*twins.device), Parameters(*twins.cpu));
      EXPECT_EQ(twins.kernels.calls, 4 * static_cast<int>(twins.device->blocks().size()));
      EXPECT_EQ((*on_device)->steps_taken(), 4u);
    }
  }
}

TEST(DeviceArenaOptimizerTest, ItsStateIsTheCpuOptimizersAndMovesBetweenThem) {
  for (const OptimizerOptions& options : EveryRule()) {
    SCOPED_TRACE(OptimizerKindName(options.kind));
    Twins twins(COHORT_DTYPE_FLOAT32);
    auto [on_cpu, on_device] = twins.Create(options);
    ASSERT_TRUE(on_cpu.ok() && on_device.ok());
    twins.Step(**on_cpu, **on_device, 1, 3);
    const std::string saved = (*on_device)->SaveState();
    EXPECT_EQ(saved, (*on_cpu)->SaveState());
    const bool has_buffers = options.kind != Kind::kSgd || options.momentum > 0;
    EXPECT_EQ(twins.memory.device().copies_to_host > 0, has_buffers);

    // A device checkpoint resumed on the CPU, and a CPU checkpoint resumed on the device, both
    // continue as the uninterrupted CPU optimizer does.
    Twins resumed(COHORT_DTYPE_FLOAT32);
    auto [cpu_from_device, device_from_cpu] = resumed.Create(options);
    ASSERT_TRUE(cpu_from_device.ok() && device_from_cpu.ok());
    ASSERT_TRUE((*cpu_from_device)->LoadState(saved).ok());
    ASSERT_TRUE((*device_from_cpu)->LoadState((*on_cpu)->SaveState()).ok());
    EXPECT_EQ((*device_from_cpu)->steps_taken(), 3u);
    SetParameters(*resumed.cpu, Parameters(*twins.cpu));
    SetParameters(*resumed.device, Parameters(*twins.cpu));
    twins.Step(**on_cpu, **on_device, 4, 2);
    resumed.Step(**cpu_from_device, **device_from_cpu, 4, 2);
    EXPECT_EQ(Parameters(*resumed.cpu), Parameters(*twins.cpu));
    EXPECT_EQ(Parameters(*resumed.device), Parameters(*twins.cpu));
  }
}

// A checkpoint of a device optimizer: each buffer is copied from the device once per save, a
// second save reuses the first's bytes, and the bytes are the CPU optimizer's.
TEST(DeviceArenaOptimizerTest, SavingCopiesEachBufferOnceAndReusesTheBytes) {
  for (const cohort_dtype dtype : {COHORT_DTYPE_FLOAT32, COHORT_DTYPE_FLOAT64}) {
    Twins twins(dtype);
    auto [on_cpu, on_device] = twins.Create(Adam());
    ASSERT_TRUE(on_cpu.ok() && on_device.ok());
    twins.Step(**on_cpu, **on_device, 1, 2);
    std::string saved;
    (*on_device)->SaveStateInto(saved, /*sealed=*/false, nullptr);
    const char* memory = saved.data();
    twins.Step(**on_cpu, **on_device, 3, 1);
    const int before = twins.memory.device().copies_to_host;
    (*on_device)->SaveStateInto(saved, /*sealed=*/true, nullptr);
    EXPECT_EQ(twins.memory.device().copies_to_host - before,
              2 * static_cast<int>(twins.device->blocks().size()))
        << "Adam's two buffers per block";
    EXPECT_EQ(saved.data(), memory) << "the bytes of the save before were not reused";
    EXPECT_EQ(saved, (*on_cpu)->SaveState());
  }
}

// A background checkpoint's save: each buffer goes into page-locked memory, the bytes hold the
// buffers only once the copies land (on the writer's thread), and then sealed they are the CPU
// optimizer's; the next save takes no new page-locked memory.
TEST(DeviceArenaOptimizerTest, AStagedSaveLandsTheCpuOptimizersBytes) {
  Twins twins(COHORT_DTYPE_FLOAT32);
  auto [on_cpu, on_device] = twins.Create(Adam());
  ASSERT_TRUE(on_cpu.ok() && on_device.ok());
  StagedHostCopies staged;
  std::string saved;
  for (int save = 0; save < 2; ++save) {
    twins.Step(**on_cpu, **on_device, 1 + save, 1);
    (*on_device)->SaveStateInto(saved, /*sealed=*/false, &staged);
    const size_t buffers = 2 * twins.device->blocks().size();  // Adam's two per block
    EXPECT_EQ(staged.staged(), buffers);
    std::string unsealed;
    (*on_cpu)->SaveStateInto(unsealed, /*sealed=*/false, nullptr);
    ASSERT_EQ(saved.size(), unsealed.size());
    if (save == 0) {
      EXPECT_NE(saved, unsealed) << "the buffers landed before Land";
    }
    staged.Land();
    EXPECT_EQ(saved, unsealed);
    SealOptimizerState(saved);
    EXPECT_EQ(saved, (*on_cpu)->SaveState());
    EXPECT_EQ(twins.memory.device().pinned_allocations, static_cast<int>(buffers));
  }
}

TEST(DeviceArenaOptimizerTest, RefusesAnArenaWithACpuBlockAndStateOfAnotherLayout) {
  testing::HostMemoryAsDevice memory;
  HostRuleKernels kernels;
  auto mixed = TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 8},
                                    {"h", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 8}},
                                   memory);
  ASSERT_TRUE(mixed.ok());
  auto refused = Optimizer::Create(Rule(Kind::kAdam, 0, false, 0), **mixed, &kernels);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("(cpu, float32)"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("runs on device float32"));

  auto device =
      TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 8}}, memory);
  ASSERT_TRUE(device.ok());
  auto optimizer = Optimizer::Create(Rule(Kind::kAdam, 0, false, 0), **device, &kernels);
  ASSERT_TRUE(optimizer.ok());
  auto other =
      TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 9}}, memory);
  auto other_optimizer = Optimizer::Create(Rule(Kind::kAdam, 0, false, 0), **other, &kernels);
  ASSERT_TRUE(other_optimizer.ok());
  EXPECT_EQ((*optimizer)->LoadState((*other_optimizer)->SaveState()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceArenaOptimizerTest, AKernelThatCannotBeEnqueuedFailsTheStepNamingIt) {
  testing::HostMemoryAsDevice memory;
  HostRuleKernels kernels;
  kernels.fail_with = absl::InternalError("cudaErrorLaunchFailure");
  auto arena =
      TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 8}}, memory);
  ASSERT_TRUE(arena.ok());
  auto optimizer = Optimizer::Create(Rule(Kind::kSgd, 0, false, 0), **arena, &kernels);
  ASSERT_TRUE(optimizer.ok());
  const absl::Status step = (*optimizer)->Step();
  EXPECT_EQ(step.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(step.message(), "optimizer step 1 on cuda:0: cudaErrorLaunchFailure");
}

}  // namespace
}  // namespace cohort
