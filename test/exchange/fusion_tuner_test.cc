// FusionCandidates: which bucket sizes are worth comparing for a gradient; FusionTuner: warm-up
// and measured batches per candidate, medians, the kept candidate, a checkpoint's choice; the
// "bucket_limits" checkpoint file.
#include "runtime/exchange/fusion_tuner.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"

namespace cohort {
namespace fusion_tuner_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::unique_ptr<TensorArena> ArenaOf(std::vector<uint64_t> counts, DeviceMemoryProvider& memory) {
  std::vector<TensorDescriptor> specs;
  for (size_t i = 0; i < counts.size(); ++i) {
    specs.push_back(TensorDescriptor{
        "t" + std::to_string(i), COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, counts[i]});
  }
  absl::StatusOr<std::unique_ptr<TensorArena>> arena = TensorArena::Create(specs, memory);
  EXPECT_TRUE(arena.ok()) << arena.status();
  return arena.ok() ? *std::move(arena) : nullptr;
}

std::vector<uint64_t> BucketSizes(const std::vector<BucketLimits>& candidates) {
  std::vector<uint64_t> sizes;
  for (const BucketLimits& limits : candidates) sizes.push_back(limits.bucket_bytes);
  return sizes;
}

TEST(FusionCandidatesTest, ASmallGradientHasOneCandidate) {
  CpuOnlyMemoryProvider memory;
  std::unique_ptr<TensorArena> arena = ArenaOf({1000, 3000, 10}, memory);  // 16 KB
  EXPECT_THAT(FusionCandidates(*arena, 64 * kMiB), ElementsAre(BucketLimits{256 << 10, 256 << 10}));
}

TEST(FusionCandidatesTest, PowersOfFourUpToOneBucketForTheWholeGradient) {
  CpuOnlyMemoryProvider memory;
  // Sixteen tensors of 1 MiB: 16 MiB. FitBucketLimits alone picks 4 MiB (a quarter).
  std::unique_ptr<TensorArena> arena = ArenaOf(std::vector<uint64_t>(16, kMiB / 4), memory);
  const std::vector<BucketLimits> candidates = FusionCandidates(*arena, 64 * kMiB);
  // 1 MiB cuts as 256 KiB does (a bucket per tensor): left out.
  EXPECT_THAT(candidates, ElementsAre(BucketLimits{256 << 10, 256 << 10},
                                      BucketLimits{4 * kMiB, kMiB}, BucketLimits{16 * kMiB, kMiB}));
}

TEST(FusionCandidatesTest, TheThresholdBoundsTheSizesTried) {
  CpuOnlyMemoryProvider memory;
  std::vector<uint64_t> counts(64, 64 << 10);  // 64 tensors of 256 KiB: 16 MiB
  std::unique_ptr<TensorArena> arena = ArenaOf(counts, memory);
  EXPECT_THAT(BucketSizes(FusionCandidates(*arena, 64 * kMiB)),
              ElementsAre(256 << 10, kMiB, 4 * kMiB, 16 * kMiB));
  EXPECT_THAT(BucketSizes(FusionCandidates(*arena, 2 * kMiB)),
              ElementsAre(256 << 10, kMiB, 2 * kMiB));
}

TEST(FusionTunerTest, MeasuresEachCandidateAfterItsWarmupAndKeepsTheFastest) {
  FusionTuner tuner({{kMiB, kMiB}, {4 * kMiB, kMiB}, {16 * kMiB, kMiB}});
  ASSERT_TRUE(tuner.tuning());
  const std::vector<std::vector<double>> times = {
      {9.0, 0.030, 0.010, 0.012, 0.011, 0.500},  // warm-up 9 s ignored; median 0.012
      {9.0, 0.008, 0.009, 0.007, 0.009, 0.008},  // median 0.008
      {9.0, 0.020, 0.020, 0.020, 0.020, 0.020}};
  for (size_t candidate = 0; candidate < times.size(); ++candidate) {
    EXPECT_EQ(tuner.current(), tuner.candidates()[candidate]);
    for (size_t batch = 0; batch < times[candidate].size(); ++batch) {
      const FusionTuner::Step step = tuner.Record(times[candidate][batch]);
      const bool last = batch + 1 == times[candidate].size();
      EXPECT_EQ(step, !last                          ? FusionTuner::Step::kSame
                      : candidate + 1 < times.size() ? FusionTuner::Step::kNextCandidate
                                                     : FusionTuner::Step::kAllMeasured);
    }
  }
  EXPECT_THAT(tuner.medians(), ElementsAre(0.012, 0.008, 0.020));
  EXPECT_TRUE(tuner.tuning());
  EXPECT_EQ(tuner.Decide(tuner.medians()), 1u);
  EXPECT_FALSE(tuner.tuning());
  EXPECT_EQ(tuner.current(), (BucketLimits{4 * kMiB, kMiB}));
  EXPECT_EQ(tuner.Describe(tuner.medians()),
            "1 MiB 12.00 ms, 4 MiB 8.00 ms (kept), 16 MiB 20.00 ms");
  EXPECT_EQ(tuner.Record(0.001), FusionTuner::Step::kSame);
  EXPECT_EQ(tuner.current(), (BucketLimits{4 * kMiB, kMiB}));
}

TEST(FusionTunerTest, DecidesOnTheFiguresItIsGivenTheFirstOfEqualOnes) {
  FusionTuner tuner({{kMiB, kMiB}, {4 * kMiB, kMiB}});
  EXPECT_EQ(tuner.Decide({0.5, 0.5}), 0u);  // equal: the first
  FusionTuner other({{kMiB, kMiB}, {4 * kMiB, kMiB}});
  EXPECT_EQ(other.Decide({0.5, 0.25}), 1u);
}

TEST(FusionTunerTest, OneCandidateIsDecidedFromTheStart) {
  FusionTuner tuner({{256 << 10, 256 << 10}});
  EXPECT_FALSE(tuner.tuning());
  EXPECT_EQ(tuner.Record(1.0), FusionTuner::Step::kSame);
}

TEST(FusionTunerTest, AdoptingACheckpointsChoiceEndsTuning) {
  FusionTuner tuner({{kMiB, kMiB}, {4 * kMiB, kMiB}});
  EXPECT_TRUE(tuner.Adopt({4 * kMiB, kMiB}, 64 * kMiB));
  EXPECT_FALSE(tuner.tuning());
  EXPECT_EQ(tuner.current(), (BucketLimits{4 * kMiB, kMiB}));
  // A size this run would not try (another model build) is still kept.
  FusionTuner other({{kMiB, kMiB}});
  EXPECT_TRUE(other.Adopt({3 * kMiB, kMiB}, 64 * kMiB));
  EXPECT_EQ(other.current(), (BucketLimits{3 * kMiB, kMiB}));
}

TEST(FusionTunerTest, AChoiceAboveALoweredThresholdIsComparedAgain) {
  FusionTuner tuner({{kMiB, kMiB}, {2 * kMiB, kMiB}});
  EXPECT_FALSE(tuner.Adopt({4 * kMiB, kMiB}, 2 * kMiB));
  EXPECT_TRUE(tuner.tuning());
  EXPECT_EQ(tuner.current(), (BucketLimits{kMiB, kMiB}));
  EXPECT_EQ(tuner.candidates().size(), 2u);
  // At the threshold itself it is kept.
  EXPECT_TRUE(tuner.Adopt({2 * kMiB, kMiB}, 2 * kMiB));
  EXPECT_FALSE(tuner.tuning());
}

TEST(BucketLimitsTextTest, RoundTripsAndRefusesAnythingElse) {
  const BucketLimits limits{4 * kMiB, kMiB};
  absl::StatusOr<BucketLimits> back = ParseBucketLimits(BucketLimitsText(limits));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, limits);
  for (const char* bad : {"", "4194304", "4194304 x", "0 0", "1048576 4194304", "1 2 3"}) {
    absl::StatusOr<BucketLimits> parsed = ParseBucketLimits(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("bucket_limits")) << bad;
  }
}

TEST(BucketBytesTextTest, SaysKibOrMib) {
  EXPECT_EQ(BucketBytesText(256 << 10), "256 KiB");
  EXPECT_EQ(BucketBytesText(16 * kMiB), "16 MiB");
  EXPECT_EQ(BucketBytesText(3 * kMiB / 2), "1.5 MiB");
}

}  // namespace fusion_tuner_test
}  // namespace cohort
