// PlanBuckets: blocks, reverse registration order, limits, huge tensors, the smaller first bucket,
// buckets that follow an observed ready order; FitBucketLimits: limits that follow the gradient's
// size.
#include "runtime/exchange/bucket_plan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

TensorDescriptor Tensor(const char* name, uint64_t count,
                        cohort_dtype dtype = COHORT_DTYPE_FLOAT32) {
  return TensorDescriptor{name, dtype, {COHORT_DEVICE_CPU, 0}, count};
}

class BucketPlanTest : public ::testing::Test {
 protected:
  const TensorArena& Arena(std::vector<TensorDescriptor> specs) {
    auto arena = TensorArena::Create(std::move(specs), memory_);
    EXPECT_TRUE(arena.ok()) << arena.status();
    arena_ = *std::move(arena);
    return *arena_;
  }

  std::vector<GradientBucket> Plan(uint64_t bucket_bytes, uint64_t first_bucket_bytes,
                                   std::vector<size_t> ready_order = {}) {
    auto plan = PlanBuckets(*arena_, bucket_bytes, first_bucket_bytes, ready_order);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : std::vector<GradientBucket>{};
  }

  CpuOnlyMemoryProvider memory_;
  std::unique_ptr<TensorArena> arena_;
};

TEST_F(BucketPlanTest, EmptyArenaGivesEmptyPlan) {
  Arena({});
  EXPECT_TRUE(Plan(1024, 1024).empty());
}

TEST_F(BucketPlanTest, EverythingFitsOneBucketWithGapsInside) {
  // Offsets 0, 32, 48 (floats, 64-byte aligned); the range runs from 0 to 48 + 5.
  Arena({Tensor("a", 17), Tensor("b", 16), Tensor("c", 5)});
  std::vector<GradientBucket> plan = Plan(1 << 20, 1 << 20);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].block, 0u);
  EXPECT_EQ(plan[0].offset, 0u);
  EXPECT_EQ(plan[0].count, 53u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(2, 1, 0));
}

TEST_F(BucketPlanTest, SizesAroundTheLimitAndReverseOrder) {
  // Four tensors of 16 floats (64 bytes each), back to back at offsets 0, 16, 32, 48.
  Arena({Tensor("a", 16), Tensor("b", 16), Tensor("c", 16), Tensor("d", 16)});
  // Exactly two tensors' bytes fit: d+c, then b+a.
  std::vector<GradientBucket> plan = Plan(128, 128);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(3, 2));
  EXPECT_EQ(plan[0].offset, 32u);
  EXPECT_EQ(plan[0].count, 32u);
  EXPECT_THAT(plan[1].tensors, ElementsAre(1, 0));
  EXPECT_EQ(plan[1].offset, 0u);
  EXPECT_EQ(plan[1].count, 32u);
  // One byte less: every tensor alone.
  plan = Plan(127, 127);
  ASSERT_EQ(plan.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_THAT(plan[i].tensors, ElementsAre(3 - i));
    EXPECT_EQ(plan[i].offset, 16 * (3 - i));
    EXPECT_EQ(plan[i].count, 16u);
  }
  // A limit of 0 means no fusion.
  EXPECT_EQ(Plan(0, 0).size(), 4u);
}

TEST_F(BucketPlanTest, AlignmentGapsCountTowardsTheLimit) {
  // a: 1 float at 0, b: 1 float at 16. The range b..a is 17 floats = 68 bytes.
  Arena({Tensor("a", 1), Tensor("b", 1)});
  EXPECT_EQ(Plan(67, 67).size(), 2u);
  std::vector<GradientBucket> plan = Plan(68, 68);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].count, 17u);
}

TEST_F(BucketPlanTest, HugeTensorGetsABucketOfItsOwn) {
  Arena({Tensor("a", 16), Tensor("huge", 10000), Tensor("c", 16)});
  std::vector<GradientBucket> plan = Plan(256, 256);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(2));
  EXPECT_THAT(plan[1].tensors, ElementsAre(1));
  EXPECT_EQ(plan[1].offset, 16u);
  EXPECT_EQ(plan[1].count, 10000u);
  EXPECT_THAT(plan[2].tensors, ElementsAre(0));
}

TEST_F(BucketPlanTest, FirstBucketIsSmaller) {
  Arena({Tensor("a", 16), Tensor("b", 16), Tensor("c", 16), Tensor("d", 16), Tensor("e", 16)});
  std::vector<GradientBucket> plan = Plan(/*bucket_bytes=*/256, /*first_bucket_bytes=*/64);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(4));
  EXPECT_THAT(plan[1].tensors, ElementsAre(3, 2, 1, 0));
  EXPECT_EQ(plan[1].offset, 0u);
  EXPECT_EQ(plan[1].count, 64u);
}

// The limits follow the gradient's size: a 4 MiB model gets several buckets; a large one is
// bounded by the threshold and the first by 1 MiB; a small one (the mlp example's 28 KB, a 150 KB
// CNN, a 1 MB MLP) is one bucket, since no bucket is below kSmallestBucketBytes.
TEST_F(BucketPlanTest, LimitsFitTheGradient) {
  Arena({Tensor("w", 1 << 20)});  // 4 MiB of float32
  BucketLimits limits = FitBucketLimits(*arena_, 64 << 20);
  EXPECT_EQ(limits.bucket_bytes, 1u << 20);
  EXPECT_EQ(limits.first_bucket_bytes, kSmallestBucketBytes);

  Arena({Tensor("a", 2 << 20), Tensor("b", 2 << 20)});  // 16 MiB
  limits = FitBucketLimits(*arena_, 64 << 20);
  EXPECT_EQ(limits.bucket_bytes, 4u << 20);
  EXPECT_EQ(limits.first_bucket_bytes, 1u << 20);
  limits = FitBucketLimits(*arena_, 2 << 20);  // tensor_fusion_threshold: 2
  EXPECT_EQ(limits.bucket_bytes, 2u << 20);
  EXPECT_EQ(limits.first_bucket_bytes, 1u << 20);

  Arena({Tensor("b", 10)});
  limits = FitBucketLimits(*arena_, 64 << 20);
  EXPECT_EQ(limits.bucket_bytes, kSmallestBucketBytes);
  EXPECT_EQ(limits.first_bucket_bytes, kSmallestBucketBytes);

  // 16 tensors of 10 KiB (160 KiB): one bucket.
  std::vector<TensorDescriptor> layers;
  const char* names[] = {"l0", "l1", "l2",  "l3",  "l4",  "l5",  "l6",  "l7",
                         "l8", "l9", "l10", "l11", "l12", "l13", "l14", "l15"};
  for (const char* name : names) layers.push_back(Tensor(name, 10 << 8));
  Arena(layers);
  limits = FitBucketLimits(*arena_, 64 << 20);
  std::vector<GradientBucket> plan = Plan(limits.bucket_bytes, limits.first_bucket_bytes);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].tensors.size(), 16u);

  // 16 tensors of 256 KiB (4 MiB): buckets of 1 MiB, four tensors each, the last first.
  for (TensorDescriptor& layer : layers) layer = Tensor(layer.name.c_str(), 256 << 8);
  Arena(layers);
  limits = FitBucketLimits(*arena_, 64 << 20);
  plan = Plan(limits.bucket_bytes, limits.first_bucket_bytes);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(15, 14, 13, 12));
  for (const GradientBucket& bucket : plan) EXPECT_LE(bucket.count * 4, limits.bucket_bytes);

  // 1 MiB: one bucket (DDP's first bucket); 8 MiB: buckets of 2 MiB after a first of 1 MiB.
  Arena({Tensor("w", 1 << 18)});
  limits = FitBucketLimits(*arena_, 64 << 20);
  EXPECT_EQ(Plan(limits.bucket_bytes, limits.first_bucket_bytes).size(), 1u);
  Arena({Tensor("a", 1 << 20), Tensor("b", 1 << 20)});
  limits = FitBucketLimits(*arena_, 64 << 20);
  EXPECT_EQ(limits.bucket_bytes, 2u << 20);
  EXPECT_EQ(limits.first_bucket_bytes, 1u << 20);
}

TEST_F(BucketPlanTest, TwoDtypesGiveBucketsPerBlockInBackwardOrder) {
  // Registration: f32 a, f16 h, f32 b, f16 g. Blocks: 0 = float32 (a, b), 1 = float16 (h, g).
  Arena({Tensor("a", 16), Tensor("h", 32, COHORT_DTYPE_FLOAT16), Tensor("b", 16),
         Tensor("g", 32, COHORT_DTYPE_FLOAT16)});
  ASSERT_EQ(arena_->blocks().size(), 2u);
  // 64 bytes: one tensor per bucket; order by backward: g, b, h, a.
  std::vector<GradientBucket> plan = Plan(64, 64);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(3));
  EXPECT_EQ(plan[0].block, 1u);
  EXPECT_THAT(plan[1].tensors, ElementsAre(2));
  EXPECT_EQ(plan[1].block, 0u);
  EXPECT_THAT(plan[2].tensors, ElementsAre(1));
  EXPECT_EQ(plan[2].block, 1u);
  EXPECT_THAT(plan[3].tensors, ElementsAre(0));
  EXPECT_EQ(plan[3].block, 0u);
  // Large limit: one bucket per block; a bucket completes with its lowest tensor, h (1) before a
  // (0).
  plan = Plan(1 << 20, 1 << 20);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].block, 1u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(3, 1));
  EXPECT_EQ(plan[0].count, 64u);  // h at 0 (32 halves = 64 bytes), g at 32
  EXPECT_EQ(plan[1].block, 0u);
  EXPECT_THAT(plan[1].tensors, ElementsAre(2, 0));
}

TEST_F(BucketPlanTest, SameArenaSamePlan) {
  Arena({Tensor("a", 100), Tensor("b", 7), Tensor("c", 300), Tensor("d", 1)});
  std::vector<GradientBucket> first = Plan(1024, 256), second = Plan(1024, 256);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].offset, second[i].offset);
    EXPECT_EQ(first[i].count, second[i].count);
    EXPECT_EQ(first[i].tensors, second[i].tensors);
  }
}

// Reverse registration order given explicitly: runs cut at the limits (the first bucket's smaller
// one included) are not joined again afterwards, and alignment gaps count towards the limits.
TEST_F(BucketPlanTest, ReverseRegistrationAsAReadyOrderCutsAtTheLimits) {
  // Offsets (floats, 64-byte aligned): a 0, b 32, c 48, d 64, e 112.
  Arena({Tensor("a", 17), Tensor("b", 16), Tensor("c", 5), Tensor("d", 40), Tensor("e", 1)});
  std::vector<GradientBucket> plan =
      Plan(/*bucket_bytes=*/256, /*first_bucket_bytes=*/128, {4, 3, 2, 1, 0});
  ASSERT_EQ(plan.size(), 3u);
  // e alone: e and d would span 49 floats, 196 bytes, over the first bucket's 128.
  EXPECT_THAT(plan[0].tensors, ElementsAre(4));
  EXPECT_EQ(plan[0].offset, 112u);
  EXPECT_EQ(plan[0].count, 1u);
  // d and c: 56 floats, 224 bytes; with b they would be 72 floats, 288 bytes.
  EXPECT_THAT(plan[1].tensors, ElementsAre(3, 2));
  EXPECT_EQ(plan[1].offset, 48u);
  EXPECT_EQ(plan[1].count, 56u);
  // b and a: 48 floats, 192 bytes.
  EXPECT_THAT(plan[2].tensors, ElementsAre(1, 0));
  EXPECT_EQ(plan[2].offset, 0u);
  EXPECT_EQ(plan[2].count, 48u);
}

// Autograd often finishes a layer's weight before its bias: such swaps inside a bucket's reach
// still give the default buckets, not a bucket per tensor.
TEST_F(BucketPlanTest, TensorsALittleOutOfOrderStillFuse) {
  // w0 b0 w1 b1 w2 b2, 16 floats (64 bytes) each; backward: w2 b2 w1 b1 w0 b0.
  Arena({Tensor("w0", 16), Tensor("b0", 16), Tensor("w1", 16), Tensor("b1", 16), Tensor("w2", 16),
         Tensor("b2", 16)});
  const std::vector<size_t> order = {4, 5, 2, 3, 0, 1};
  EXPECT_EQ(Plan(128, 128, order), Plan(128, 128));
  EXPECT_EQ(Plan(1 << 20, 1 << 20, order), Plan(1 << 20, 1 << 20));
  std::vector<GradientBucket> plan = Plan(256, 128, order);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(5, 4));
  EXPECT_THAT(plan[1].tensors, ElementsAre(3, 2, 1, 0));
}

// A tensor registered last whose gradient completes last (an input embedding registered after the
// layers) no longer holds back the first bucket: it gets one of its own, launched last.
TEST_F(BucketPlanTest, ATensorCompletedLastNoLongerHoldsBackTheFirstBucket) {
  Arena({Tensor("l0", 16), Tensor("l1", 16), Tensor("l2", 16), Tensor("embedding", 16)});
  std::vector<GradientBucket> by_registration = Plan(128, 128);
  ASSERT_EQ(by_registration.size(), 2u);
  EXPECT_THAT(by_registration[0].tensors, ElementsAre(3, 2));  // waits for the embedding

  std::vector<GradientBucket> plan = Plan(128, 128, {2, 1, 0, 3});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(2, 1));
  EXPECT_EQ(plan[0].offset, 16u);
  EXPECT_EQ(plan[0].count, 32u);
  EXPECT_THAT(plan[1].tensors, ElementsAre(0));
  EXPECT_THAT(plan[2].tensors, ElementsAre(3));
}

// Forward order (heads registered last, completed first, reported in registration order): the
// buckets run from the first registered tensor up, the first one small.
TEST_F(BucketPlanTest, RegistrationOrderGivesBucketsFromTheFirstTensorUp) {
  Arena({Tensor("a", 16), Tensor("b", 16), Tensor("c", 16), Tensor("d", 16), Tensor("e", 16)});
  std::vector<GradientBucket> plan =
      Plan(/*bucket_bytes=*/192, /*first_bucket_bytes=*/64, {0, 1, 2, 3, 4});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_THAT(plan[0].tensors, ElementsAre(0));
  EXPECT_THAT(plan[1].tensors, ElementsAre(3, 2, 1));
  EXPECT_EQ(plan[1].offset, 16u);
  EXPECT_EQ(plan[1].count, 48u);
  EXPECT_THAT(plan[2].tensors, ElementsAre(4));
}

TEST_F(BucketPlanTest, AReadyOrderMustNameEveryTensorOnce) {
  Arena({Tensor("a", 16), Tensor("b", 16), Tensor("c", 16)});
  auto status = [&](std::vector<size_t> order) {
    return PlanBuckets(*arena_, 128, 128, order).status();
  };
  EXPECT_THAT(std::string(status({0, 1}).message()),
              ::testing::HasSubstr("names 2 tensors; the arena has 3"));
  EXPECT_THAT(std::string(status({0, 1, 3}).message()),
              ::testing::HasSubstr("names tensor 3; the arena has 3 tensors"));
  const absl::Status twice = status({0, 1, 1});
  EXPECT_TRUE(absl::IsInvalidArgument(twice)) << twice;
  EXPECT_THAT(std::string(twice.message()), ::testing::HasSubstr("tensor 'b' (1) twice"));
}

}  // namespace
}  // namespace cohort
