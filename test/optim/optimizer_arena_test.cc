// Optimizers over whole arenas: every block of a mixed float32/float64 arena is updated, the
// alignment gaps stay zero, gradients are left alone, the layout does not change any result, and
// blocks the built-in optimizers cannot update are refused.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/optim/optimizer.h"
#include "test/optim/optim_test_util.h"

namespace cohort {
namespace {

using optim_test::CpuTensor;
using optim_test::MakeArena;
using ::testing::HasSubstr;

using Kind = OptimizerOptions::Kind;

OptimizerOptions Options(Kind kind) {
  OptimizerOptions options;
  options.kind = kind;
  options.learning_rate = 0.05;
  options.weight_decay = 0.01;
  if (kind == Kind::kSgd) {
    options.momentum = 0.9;
    options.nesterov = true;
  }
  return options;
}

// Gaps in both blocks: float32 "a" (3) then "c" (17) then "e" (1); float64 "b" (5) then "d" (2).
std::vector<TensorDescriptor> MixedSpecs() {
  return {CpuTensor("a", 3, COHORT_DTYPE_FLOAT32), CpuTensor("b", 5, COHORT_DTYPE_FLOAT64),
          CpuTensor("c", 17, COHORT_DTYPE_FLOAT32), CpuTensor("d", 2, COHORT_DTYPE_FLOAT64),
          CpuTensor("e", 1, COHORT_DTYPE_FLOAT32)};
}

// A gradient or starting value for element i of a tensor at a step, never 0.
double Value(size_t tensor, size_t i, int step) {
  return std::sin(1.0 + 0.7 * tensor + 0.3 * i + 1.9 * step);
}

template <class T>
void SetTensor(T* values, size_t tensor, uint64_t count, int step) {
  for (uint64_t i = 0; i < count; ++i) values[i] = static_cast<T>(Value(tensor, i, step));
}

// Sets every tensor's values (step < 0) or gradients (step >= 0) in `arena`, where tensor `first`
// of the full MixedSpecs() is tensor 0.
void Set(const TensorArena& arena, int step, size_t first = 0) {
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    void* where = step < 0 ? arena.data(t) : arena.grad(t);
    const uint64_t count = arena.spec(t).element_count;
    if (arena.spec(t).dtype == COHORT_DTYPE_FLOAT64) {
      SetTensor(static_cast<double*>(where), first + t, count, step);
    } else {
      SetTensor(static_cast<float*>(where), first + t, count, step);
    }
  }
}

// True when every element of every block outside the tensors is +0 in both data and grad.
::testing::AssertionResult GapsAreZero(const TensorArena& arena) {
  for (size_t b = 0; b < arena.blocks().size(); ++b) {
    const ArenaBlock& block = arena.blocks()[b];
    std::vector<bool> used(block.element_count, false);
    for (size_t t = 0; t < arena.tensor_count(); ++t) {
      if (arena.placement(t).block != b) continue;
      for (uint64_t i = 0; i < arena.placement(t).element_count; ++i)
        used[arena.placement(t).offset + i] = true;
    }
    const std::vector<char> zero(block.element_size, 0);
    for (uint64_t i = 0; i < block.element_count; ++i) {
      if (used[i]) continue;
      for (const void* base : {block.data, block.grad}) {
        if (std::memcmp(static_cast<const char*>(base) + i * block.element_size, zero.data(),
                        zero.size()) != 0) {
          return ::testing::AssertionFailure()
                 << "block " << b << " element " << i << " is not +0 in "
                 << (base == block.data ? "data" : "grad");
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

class ArenaStepTest : public ::testing::TestWithParam<Kind> {};

TEST_P(ArenaStepTest, UpdatesEveryTensorKeepsGapsZeroAndLeavesGradientsAlone) {
  std::unique_ptr<TensorArena> arena = MakeArena(MixedSpecs());
  ASSERT_NE(arena, nullptr);
  ASSERT_EQ(arena->blocks().size(), 2u);
  auto optimizer = Optimizer::Create(Options(GetParam()), *arena);
  ASSERT_TRUE(optimizer.ok()) << optimizer.status();
  Set(*arena, -1);
  for (int step = 0; step < 5; ++step) {
    Set(*arena, step);
    std::vector<std::vector<char>> before, grads_before;
    for (const ArenaBlock& b : arena->blocks()) {
      const char* data = static_cast<const char*>(b.data);
      const char* grad = static_cast<const char*>(b.grad);
      before.emplace_back(data, data + b.element_count * b.element_size);
      grads_before.emplace_back(grad, grad + b.element_count * b.element_size);
    }
    ASSERT_TRUE((*optimizer)->Step().ok());
    EXPECT_EQ((*optimizer)->steps_taken(), static_cast<uint64_t>(step + 1));
    EXPECT_TRUE(GapsAreZero(*arena)) << "after step " << step + 1;
    for (size_t b = 0; b < arena->blocks().size(); ++b) {
      const ArenaBlock& block = arena->blocks()[b];
      EXPECT_EQ(std::memcmp(block.grad, grads_before[b].data(), grads_before[b].size()), 0)
          << "block " << b;
      EXPECT_NE(std::memcmp(block.data, before[b].data(), before[b].size()), 0) << "block " << b;
    }
    for (size_t t = 0; t < arena->tensor_count(); ++t) {  // every element moved
      for (uint64_t i = 0; i < arena->spec(t).element_count; ++i) {
        const uint64_t at = arena->placement(t).offset + i;
        const ArenaBlock& block = arena->blocks()[arena->placement(t).block];
        EXPECT_NE(std::memcmp(static_cast<const char*>(block.data) + at * block.element_size,
                              before[arena->placement(t).block].data() + at * block.element_size,
                              block.element_size),
                  0)
            << arena->spec(t).name << "[" << i << "] after step " << step + 1;
      }
    }
  }
}

TEST_P(ArenaStepTest, EachTensorEndsAsIfItWereAlone) {
  std::unique_ptr<TensorArena> mixed = MakeArena(MixedSpecs());
  ASSERT_NE(mixed, nullptr);
  auto optimizer = Optimizer::Create(Options(GetParam()), *mixed);
  ASSERT_TRUE(optimizer.ok());
  Set(*mixed, -1);
  for (int step = 0; step < 4; ++step) {
    Set(*mixed, step);
    ASSERT_TRUE((*optimizer)->Step().ok());
  }
  const std::vector<TensorDescriptor> specs = MixedSpecs();
  for (size_t t = 0; t < specs.size(); ++t) {
    std::unique_ptr<TensorArena> alone = MakeArena({specs[t]});
    ASSERT_NE(alone, nullptr);
    auto single = Optimizer::Create(Options(GetParam()), *alone);
    ASSERT_TRUE(single.ok());
    Set(*alone, -1, t);
    for (int step = 0; step < 4; ++step) {
      Set(*alone, step, t);
      ASSERT_TRUE((*single)->Step().ok());
    }
    const size_t bytes = specs[t].element_count * (specs[t].dtype == COHORT_DTYPE_FLOAT64 ? 8 : 4);
    EXPECT_EQ(std::memcmp(mixed->data(t), alone->data(0), bytes), 0) << specs[t].name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ArenaStepTest,
                         ::testing::Values(Kind::kSgd, Kind::kAdam, Kind::kAdamW),
                         [](const auto& info) {
                           return std::string(OptimizerKindName(info.param));
                         });

TEST(OptimizerCreateTest, AnEmptyArenaStepsWithNothingToDo) {
  std::unique_ptr<TensorArena> arena = MakeArena({});
  ASSERT_NE(arena, nullptr);
  auto optimizer = Optimizer::Create(Options(Kind::kAdam), *arena);
  ASSERT_TRUE(optimizer.ok());
  EXPECT_TRUE((*optimizer)->Step().ok());
  EXPECT_EQ((*optimizer)->steps_taken(), 1u);
}

TEST(OptimizerCreateTest, KeepsTheOptions) {
  std::unique_ptr<TensorArena> arena = MakeArena({CpuTensor("w", 4, COHORT_DTYPE_FLOAT32)});
  ASSERT_NE(arena, nullptr);
  auto optimizer = Optimizer::Create(Options(Kind::kSgd), *arena);
  ASSERT_TRUE(optimizer.ok());
  EXPECT_EQ((*optimizer)->options().kind, Kind::kSgd);
  EXPECT_EQ((*optimizer)->options().momentum, 0.9);
  EXPECT_TRUE((*optimizer)->options().nesterov);
  EXPECT_EQ((*optimizer)->steps_taken(), 0u);
}

TEST(OptimizerCreateTest, RefusesHalfPrecisionBlocksNamingDeviceAndDtype) {
  for (cohort_dtype dtype : {COHORT_DTYPE_FLOAT16, COHORT_DTYPE_BFLOAT16}) {
    std::unique_ptr<TensorArena> arena =
        MakeArena({CpuTensor("w", 4, COHORT_DTYPE_FLOAT32), CpuTensor("h", 4, dtype)});
    ASSERT_NE(arena, nullptr);
    auto optimizer = Optimizer::Create(Options(Kind::kAdam), *arena);
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(optimizer.status().message(),
                HasSubstr(dtype == COHORT_DTYPE_FLOAT16 ? "block 1 (cpu, float16)"
                                                        : "block 1 (cpu, bfloat16)"));
    EXPECT_THAT(optimizer.status().message(), HasSubstr("cpu float32 and float64 blocks only"));
  }
}

// Serves host memory for every device, so an arena can hold a block that claims to be on a GPU.
class AnyDeviceIsHostMemory final : public DeviceMemoryProvider {
 public:
  absl::StatusOr<DeviceMemory*> For(cohort_device) override { return &cpu_; }

 private:
  CpuMemory cpu_;
};

TEST(OptimizerCreateTest, RefusesBlocksOffTheCpuNamingDeviceAndDtype) {
  AnyDeviceIsHostMemory memory;
  auto arena = TensorArena::Create(
      {TensorDescriptor{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 1}, 8}}, memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  auto optimizer = Optimizer::Create(Options(Kind::kSgd), **arena);
  ASSERT_FALSE(optimizer.ok());
  EXPECT_EQ(optimizer.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(optimizer.status().message(), HasSubstr("block 0 (cuda:1, float32)"));
}

TEST(OptimizerCreateTest, RefusesInvalidOptions) {
  std::unique_ptr<TensorArena> arena = MakeArena({CpuTensor("w", 4, COHORT_DTYPE_FLOAT32)});
  ASSERT_NE(arena, nullptr);
  OptimizerOptions options = Options(Kind::kSgd);
  options.learning_rate = 0;
  auto optimizer = Optimizer::Create(options, *arena);
  EXPECT_EQ(optimizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(optimizer.status().message(), HasSubstr("'learning_rate' = 0"));
  options = Options(Kind::kAdam);
  options.beta2 = 1;
  EXPECT_THAT(Optimizer::Create(options, *arena).status().message(), HasSubstr("'beta2' = 1"));
}

}  // namespace
}  // namespace cohort
