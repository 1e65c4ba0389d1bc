// IsBetterMetric: the usual order either way, and a NaN never better, nor kept as the best.
#include "runtime/base/metric_order.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace cohort {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(IsBetterMetric, FollowsTheSearchersDirection) {
  EXPECT_TRUE(IsBetterMetric(0.1, 0.2, /*smaller_is_better=*/true));
  EXPECT_FALSE(IsBetterMetric(0.2, 0.1, /*smaller_is_better=*/true));
  EXPECT_TRUE(IsBetterMetric(0.9, 0.8, /*smaller_is_better=*/false));
  EXPECT_FALSE(IsBetterMetric(0.8, 0.8, /*smaller_is_better=*/false)) << "a tie keeps the first";
  EXPECT_TRUE(IsBetterMetric(0.8, std::nullopt, /*smaller_is_better=*/false));
}

TEST(IsBetterMetric, ANanIsNeverBetterAndAnyNumberBeatsOne) {
  for (const bool smaller : {true, false}) {
    EXPECT_FALSE(IsBetterMetric(kNan, std::nullopt, smaller));
    EXPECT_FALSE(IsBetterMetric(kNan, 0.5, smaller));
    EXPECT_FALSE(IsBetterMetric(kNan, kNan, smaller));
    EXPECT_TRUE(IsBetterMetric(0.5, kNan, smaller));
    EXPECT_TRUE(IsBetterMetric(std::numeric_limits<double>::infinity(), kNan, smaller));
  }
}

}  // namespace
}  // namespace cohort
