// PlanAdaptiveAsha: brackets by mode, rung lengths, the split of trials and of concurrency.
#include "runtime/search/asha_plan.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

SearcherConfig Asha(uint64_t max_trials, AshaMode mode = AshaMode::kStandard) {
  SearcherConfig s;
  s.name = "adaptive_asha";
  s.max_trials = max_trials;
  s.mode = mode;
  return s;
}

std::vector<uint64_t> Trials(const std::vector<AshaBracketPlan>& plans) {
  std::vector<uint64_t> trials;
  for (const AshaBracketPlan& plan : plans) trials.push_back(plan.max_trials);
  return trials;
}

std::vector<uint64_t> Initial(const std::vector<AshaBracketPlan>& plans) {
  std::vector<uint64_t> initial;
  for (const AshaBracketPlan& plan : plans) initial.push_back(plan.initial_trials);
  return initial;
}

TEST(AshaPlanTest, TheDocumentedExample) {
  const std::vector<AshaBracketPlan> plans = PlanAdaptiveAsha(Asha(100), 1024);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_THAT(plans[0].rung_batches, ElementsAre(16, 64, 256, 1024));
  EXPECT_THAT(plans[1].rung_batches, ElementsAre(64, 256, 1024));
  EXPECT_THAT(plans[2].rung_batches, ElementsAre(256, 1024));
  EXPECT_THAT(Trials(plans), ElementsAre(70, 22, 8));
  EXPECT_THAT(Initial(plans), ElementsAre(6, 5, 5));
}

TEST(AshaPlanTest, ModesPickTheBrackets) {
  const std::vector<AshaBracketPlan> aggressive =
      PlanAdaptiveAsha(Asha(1000, AshaMode::kAggressive), 1024);
  ASSERT_EQ(aggressive.size(), 1u);
  EXPECT_THAT(aggressive[0].rung_batches, ElementsAre(4, 16, 64, 256, 1024));  // max_rungs 5
  EXPECT_EQ(aggressive[0].max_trials, 1000u);
  EXPECT_EQ(aggressive[0].initial_trials, 16u);

  const std::vector<AshaBracketPlan> conservative =
      PlanAdaptiveAsha(Asha(1000, AshaMode::kConservative), 1024);
  ASSERT_EQ(conservative.size(), 5u);
  for (size_t i = 0; i < conservative.size(); ++i) {
    EXPECT_EQ(conservative[i].rung_batches.size(), 5 - i);
    EXPECT_EQ(conservative[i].rung_batches.back(), 1024u);
  }
  uint64_t total = 0;
  for (uint64_t t : Trials(conservative)) total += t;
  EXPECT_EQ(total, 1000u);

  const std::vector<AshaBracketPlan> standard = PlanAdaptiveAsha(Asha(1000), 1024);
  ASSERT_EQ(standard.size(), 3u);  // 5, 4, 3 rungs
  EXPECT_EQ(standard[2].rung_batches.size(), 3u);
}

TEST(AshaPlanTest, RungsAreCappedByLengthAndTrials) {
  // 3 batches cannot hold a second rung at divisor 4.
  std::vector<AshaBracketPlan> plans = PlanAdaptiveAsha(Asha(1000), 3);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_THAT(plans[0].rung_batches, ElementsAre(3));
  // 5 trials at divisor 4 fill two rungs at most: standard gives brackets of 2 and 1 rungs.
  plans = PlanAdaptiveAsha(Asha(5), 1000);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_THAT(plans[0].rung_batches, ElementsAre(250, 1000));
  EXPECT_THAT(plans[1].rung_batches, ElementsAre(1000));
  EXPECT_THAT(Trials(plans), ElementsAre(4, 1));  // weights 2 and 1 give 3 and 1; 1 left over
}

TEST(AshaPlanTest, BracketRungsAreUsedAsGivenMostFirst) {
  SearcherConfig s = Asha(31);
  s.bracket_rungs = {2, 3};
  s.divisor = 3;
  const std::vector<AshaBracketPlan> plans = PlanAdaptiveAsha(s, 90);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_THAT(plans[0].rung_batches, ElementsAre(10, 30, 90));
  EXPECT_THAT(plans[1].rung_batches, ElementsAre(30, 90));
  EXPECT_THAT(Trials(plans), ElementsAre(21, 10));  // weights 3 and 1.5 give 20 and 10; 1 left
}

TEST(AshaPlanTest, RungsThatWouldNotTrainFurtherAreLeftOut) {
  SearcherConfig s = Asha(10);
  s.bracket_rungs = {4};
  const std::vector<AshaBracketPlan> plans = PlanAdaptiveAsha(s, 2);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_THAT(plans[0].rung_batches, ElementsAre(1, 2));  // floor(2/64), floor(2/16), ... -> 1
}

TEST(AshaPlanTest, MoreBracketsThanTrialsDropsTheLastBrackets) {
  SearcherConfig s = Asha(2);
  s.bracket_rungs = {1, 2, 3, 4, 5};
  const std::vector<AshaBracketPlan> plans = PlanAdaptiveAsha(s, 1024);
  EXPECT_THAT(Trials(plans), ElementsAre(1, 1));
  EXPECT_EQ(plans[0].rung_batches.size(), 5u);
  EXPECT_EQ(plans[1].rung_batches.size(), 4u);
}

TEST(AshaPlanTest, ConcurrencyIsSplitAndRaisedToTheBracketCount) {
  SearcherConfig s = Asha(100);
  s.max_concurrent_trials = 2;  // fewer than the 3 brackets: each gets one
  EXPECT_THAT(Initial(PlanAdaptiveAsha(s, 1024)), ElementsAre(1, 1, 1));
  s.max_concurrent_trials = 0;  // each: max(the last bracket's 8 trials, floor(4))
  EXPECT_THAT(Initial(PlanAdaptiveAsha(s, 1024)), ElementsAre(8, 8, 8));
  s.max_concurrent_trials = 1000;  // no bracket starts more than its trials
  EXPECT_THAT(Initial(PlanAdaptiveAsha(s, 1024)), ElementsAre(70, 22, 8));
}

}  // namespace
}  // namespace cohort
