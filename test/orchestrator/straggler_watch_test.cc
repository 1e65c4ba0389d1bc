// StragglerWatch: a rank slower than the fastest by more than the threshold for kStragglerReports
// reports in a row is named once per stretch; a faster report ends the stretch; threshold 0 never
// names anyone.
#include "runtime/orchestrator/straggler_watch.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<RankPace> Report(double rank1_vs_fastest) {
  return {{0, 0.004, 0.005, 1.0, 1.0}, {1, 0.009, 0.01, rank1_vs_fastest, 0.9}};
}

TEST(StragglerWatchTest, NamesARankSlowThreeReportsInARowOncePerStretch) {
  StragglerWatch watch;
  EXPECT_THAT(watch.Observe(Report(0.5), 0.2), IsEmpty());
  EXPECT_THAT(watch.Observe(Report(0.5), 0.2), IsEmpty());
  const std::vector<RankPace> named = watch.Observe(Report(0.5), 0.2);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].rank, 1u);
  EXPECT_THAT(watch.Observe(Report(0.5), 0.2), IsEmpty());   // still the same stretch
  EXPECT_THAT(watch.Observe(Report(0.95), 0.2), IsEmpty());  // within 20%: the stretch ends
  EXPECT_THAT(watch.Observe(Report(0.5), 0.2), IsEmpty());
  EXPECT_THAT(watch.Observe(Report(0.5), 0.2), IsEmpty());
  EXPECT_EQ(watch.Observe(Report(0.5), 0.2).size(), 1u);  // a new stretch
}

TEST(StragglerWatchTest, TheThresholdIsAFractionSlowerThanTheFastest) {
  StragglerWatch watch;
  // 1 / 0.84 = 1.19x the fastest: not more than 20% slower.
  for (int i = 0; i < 5; ++i) EXPECT_THAT(watch.Observe(Report(0.84), 0.2), IsEmpty());
  // 1.2x the fastest's 0.00012 s: 24 microseconds behind, noise.
  StragglerWatch tiny;
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(
        tiny.Observe({{0, 0.0001, 0.00012, 1.0, 1.0}, {1, 0.0001, 0.000144, 0.5 / 0.6, 1.0}}, 0.1),
        IsEmpty());
  }
  StragglerWatch off;
  for (int i = 0; i < 5; ++i) EXPECT_THAT(off.Observe(Report(0.01), 0), IsEmpty());
}

TEST(StragglerWatchTest, TheWarningSaysHowMuchSlower) {
  EXPECT_EQ(DescribeStraggler({1, 0.0095, 0.0102, 0.49, 0.98}),
            "rank 1 is a straggler: its step took 0.0102 s per batch, 2.04x the fastest rank's, "
            "for 3 training reports in a row (0.0095 s in the plugin; 0.98 of its own best)");
}

}  // namespace
}  // namespace cohort
