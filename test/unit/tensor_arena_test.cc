// TensorArena layout: contiguous (device, dtype) blocks, aligned tensors, zeroed gradients.
#include "runtime/arena/tensor_arena.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/arena/dtype.h"

namespace cohort {
namespace {

TensorDescriptor Tensor(const char* name, uint64_t count,
                        cohort_dtype dtype = COHORT_DTYPE_FLOAT32) {
  return TensorDescriptor{name, dtype, {COHORT_DEVICE_CPU, 0}, count};
}

TEST(TensorArenaTest, GroupsByDtypeInRegistrationOrderWithAlignedStarts) {
  CpuOnlyMemoryProvider memory;
  auto arena = TensorArena::Create(
      {Tensor("a", 17), Tensor("h", 3, COHORT_DTYPE_FLOAT16), Tensor("b", 16), Tensor("c", 1)},
      memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  const TensorArena& a = **arena;
  ASSERT_EQ(a.blocks().size(), 2u);
  EXPECT_EQ(a.placement(0).offset, 0u);
  EXPECT_EQ(a.placement(2).offset, 32u);  // 17 floats round up to 32 (two cache lines)
  EXPECT_EQ(a.placement(3).offset, 48u);
  EXPECT_EQ(a.blocks()[0].element_count, 49u);
  EXPECT_EQ(a.placement(1).block, 1u);
  EXPECT_EQ(a.blocks()[1].element_size, 2u);
  for (size_t t = 0; t < a.tensor_count(); ++t) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data(t)) % kArenaAlignment, 0u) << a.spec(t).name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.grad(t)) % kArenaAlignment, 0u) << a.spec(t).name;
  }
}

TEST(TensorArenaTest, StartsZeroedAndZeroesGradients) {
  CpuOnlyMemoryProvider memory;
  auto arena = TensorArena::Create({Tensor("w", 100)}, memory);
  ASSERT_TRUE(arena.ok());
  float* data = static_cast<float*>((*arena)->data(0));
  float* grad = static_cast<float*>((*arena)->grad(0));
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(data[i], 0.0f);
    EXPECT_EQ(grad[i], 0.0f);
    grad[i] = 1.5f;
    data[i] = 2.0f;
  }
  ASSERT_TRUE((*arena)->ZeroGradients().ok());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(grad[i], 0.0f);
    EXPECT_EQ(data[i], 2.0f);
  }
}

TEST(TensorArenaTest, ErrorsNameTheTensor) {
  CpuOnlyMemoryProvider memory;
  EXPECT_EQ(TensorArena::Create({Tensor("", 1)}, memory).status().message(),
            "tensor 0 has an empty name");
  TensorDescriptor negative = Tensor("w", 1);
  negative.device.ordinal = -1;
  EXPECT_EQ(TensorArena::Create({negative}, memory).status().message(),
            "tensor 0 'w': negative device ordinal -1");
  TensorDescriptor unknown = Tensor("w", 1);
  unknown.device.kind = 7;
  EXPECT_THAT(TensorArena::Create({unknown}, memory).status().message(),
              ::testing::HasSubstr("unknown device kind 7; allowed: 1 (cpu), 2 (cuda)"));
}

TensorDescriptor Shaped(const char* name, uint64_t count, std::vector<uint64_t> shape) {
  TensorDescriptor tensor = Tensor(name, count);
  tensor.shape = std::move(shape);
  return tensor;
}

TEST(TensorArenaTest, KeepsAMatchingShapeOrNone) {
  CpuOnlyMemoryProvider memory;
  auto arena = TensorArena::Create(
      {Shaped("w", 12, {3, 4}), Shaped("b", 4, {4}), Tensor("s", 1), Shaped("t", 6, {1, 2, 3, 1})},
      memory);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_THAT((*arena)->spec(0).shape, ::testing::ElementsAre(3u, 4u));
  EXPECT_THAT((*arena)->spec(1).shape, ::testing::ElementsAre(4u));
  EXPECT_THAT((*arena)->spec(2).shape, ::testing::IsEmpty());
  EXPECT_THAT((*arena)->spec(3).shape, ::testing::ElementsAre(1u, 2u, 3u, 1u));
  EXPECT_EQ((*arena)->placement(0).element_count, 12u);
}

TEST(TensorArenaTest, RefusesAShapeThatDoesNotMatchTheCount) {
  CpuOnlyMemoryProvider memory;
  EXPECT_EQ(
      TensorArena::Create({Tensor("b", 4), Shaped("w", 12, {3, 5})}, memory).status().message(),
      "tensor 1 'w': shape [3, 5] holds 15 elements, but element_count is 12");
  EXPECT_EQ(TensorArena::Create({Shaped("w", 12, {2, 5})}, memory).status().message(),
            "tensor 0 'w': shape [2, 5] holds 10 elements, but element_count is 12");
  EXPECT_EQ(TensorArena::Create({Shaped("w", 12, {3, 0, 4})}, memory).status().message(),
            "tensor 0 'w': shape [3, 0, 4] has a zero dimension");
  // 3 * 6148914691236517206 = 2^64 + 2: a product that wraps around to element_count is caught.
  EXPECT_EQ(
      TensorArena::Create({Shaped("w", 2, {3, 6148914691236517206u})}, memory).status().message(),
      "tensor 0 'w': shape [3, 6148914691236517206] holds more than 2^64 elements, but "
      "element_count is 2");
  EXPECT_EQ(TensorArena::Create({Shaped("w", 12, {3, 5})}, memory).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DefaultMemoryProviderTest, ServesTheCpuAndExplainsAMissingCudaDevice) {
  DefaultMemoryProvider memory;
  ASSERT_TRUE(memory.For({COHORT_DEVICE_CPU, 0}).ok());
  // cuda:1000 exists nowhere: the module (where built) or its absence says why.
  absl::StatusOr<DeviceMemory*> cuda = memory.For({COHORT_DEVICE_CUDA, 1000});
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(cuda.status().message(), ::testing::AnyOf(::testing::HasSubstr("no usable CUDA"),
                                                        ::testing::HasSubstr("does not exist")));
  EXPECT_EQ(memory.For({9, 0}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DtypeTest, SizesAndNames) {
  EXPECT_EQ(*DtypeSize(COHORT_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(*DtypeSize(COHORT_DTYPE_BFLOAT16), 2u);
  EXPECT_EQ(*DtypeSize(COHORT_DTYPE_FLOAT64), 8u);
  EXPECT_FALSE(DtypeSize(0).ok());
  EXPECT_EQ(DtypeName(COHORT_DTYPE_FLOAT16), "float16");
  EXPECT_EQ(DtypeName(9), "dtype(9)");
}

TEST(DeviceNameTest, ParsesWhatItWritesAndRefusesTheRest) {
  for (cohort_device device :
       {cohort_device{COHORT_DEVICE_CPU, 0}, cohort_device{COHORT_DEVICE_CUDA, 0},
        cohort_device{COHORT_DEVICE_CUDA, 12}}) {
    absl::StatusOr<cohort_device> parsed = ParseDeviceName(DeviceName(device));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->kind, device.kind);
    EXPECT_EQ(parsed->ordinal, device.ordinal);
  }
  for (const char* bad :
       {"", "gpu", "cuda", "cuda:", "cuda:-1", "cuda:1x", "cuda:99999999999", "CPU"}) {
    absl::StatusOr<cohort_device> parsed = ParseDeviceName(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseDeviceName("tpu:0").status().message(),
            "'tpu:0' is not a device; expected cpu or cuda:N");
}

}  // namespace
}  // namespace cohort
