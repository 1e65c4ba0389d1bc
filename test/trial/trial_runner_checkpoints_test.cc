// TrialRunner checkpoints: on a stop request (once, right after a step), and after validations
// as checkpoint_policy says (all, best for either direction of the searcher metric).
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;

TEST_F(TrialRunnerTest, StopRequestedCheckpointsAndStops) {
  ExperimentConfig config = LinregConfig();
  config.min_checkpoint_period = Batches(10);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  trial->events().stop_after_batches = 7;
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kStopped);
  EXPECT_EQ(trial->runner().batches_trained(), 7u);
  // Batches 6 and 7 are reported before the stop's checkpoint: no report would hold them else.
  EXPECT_THAT(trial->events().timeline, ElementsAre("training@5", "training@7", "checkpoint@7"));
  ASSERT_EQ(trial->events().checkpoints.size(), 1u);
  EXPECT_EQ(trial->events().checkpoints[0].id, "trial-1-batch-7");
  EXPECT_EQ(trial->events().checkpoints[0].records, 56u);
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(trial->storage(), 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "trial-1-batch-7");
  EXPECT_EQ(latest->batches_trained, 7u);
  ASSERT_FALSE(trial->events().progress.empty());
  EXPECT_EQ(trial->events().progress.back().batches, 7u);
}

TEST_F(TrialRunnerTest, StopRightAfterAScheduledCheckpointWritesItOnce) {
  ExperimentConfig config = LinregConfig();
  config.min_checkpoint_period = Batches(10);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  trial->events().stop_after_batches = 10;
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kStopped);
  EXPECT_THAT(trial->events().timeline, ElementsAre("training@5", "training@10", "checkpoint@10"));
}

// linreg from zero weights with a learning rate that makes it diverge: every validation after
// the first is worse than the one before.
ExperimentConfig DivergingConfig(CheckpointPolicy policy) {
  ExperimentConfig config = LinregConfig();
  config.searcher.max_length = Batches(12);
  config.min_validation_period = Batches(4);
  config.checkpoint_policy = policy;
  config.hyperparameters.Set("init_scale", 0.0);
  config.hyperparameters.Set("momentum", 0.0);
  config.hyperparameters.Set("learning_rate", 5.0);
  return config;
}

std::vector<double> ValidationLosses(const RecordingEvents& events) {
  std::vector<double> losses;
  for (const MetricsReport& report : events.Reports(ReportKind::kValidation)) {
    const NamedValue* loss = FindNamed(report, "loss");
    losses.push_back(loss == nullptr ? NAN : loss->value);
  }
  return losses;
}

TEST_F(TrialRunnerTest, CheckpointPolicyAllCheckpointsAfterEveryValidation) {
  std::unique_ptr<TrialHarness> trial = Trial(DivergingConfig(CheckpointPolicy::kAll));
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_THAT(
      trial->events().timeline,
      ElementsAre("validation@4", "checkpoint@4", "training@5", "validation@8", "checkpoint@8",
                  "training@10", "training@12", "validation@12", "checkpoint@12"));
}

TEST_F(TrialRunnerTest, CheckpointPolicyBestCheckpointsOnlyAfterAnImprovement) {
  std::unique_ptr<TrialHarness> trial = Trial(DivergingConfig(CheckpointPolicy::kBest));
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  const std::vector<double> losses = ValidationLosses(trial->events());
  ASSERT_EQ(losses.size(), 3u);
  ASSERT_GT(losses[1], losses[0]) << "the trial was meant to diverge";
  EXPECT_THAT(trial->events().timeline,
              ElementsAre("validation@4", "checkpoint@4", "training@5", "validation@8",
                          "training@10", "training@12", "validation@12", "checkpoint@12"));
}

// The best metric so far is part of the checkpoint: a trial resumed from its best checkpoint
// does not checkpoint a worse validation as if it were the first.
TEST_F(TrialRunnerTest, CheckpointPolicyBestRemembersTheBestAcrossARestart) {
  std::unique_ptr<TrialHarness> first = Trial(DivergingConfig(CheckpointPolicy::kBest));
  ASSERT_NE(first, nullptr);
  first->events().stop_after_batches = 6;
  ASSERT_TRUE(first->runner().Run().ok());
  EXPECT_THAT(first->events().timeline, ElementsAre("validation@4", "checkpoint@4", "training@5",
                                                    "training@6", "checkpoint@6"));
  first.reset();

  std::unique_ptr<TrialHarness> resumed = Trial(DivergingConfig(CheckpointPolicy::kBest));
  ASSERT_NE(resumed, nullptr);
  ASSERT_TRUE(resumed->runner().Restore("trial-1-batch-6").ok());
  ASSERT_TRUE(resumed->runner().Run().ok());
  EXPECT_THAT(resumed->events().timeline, ElementsAre("validation@8", "training@10", "training@12",
                                                      "validation@12", "checkpoint@12"));
}

TEST_F(TrialRunnerTest, CheckpointPolicyBestHonoursLargerIsBetter) {
  ExperimentConfig config = DivergingConfig(CheckpointPolicy::kBest);
  config.searcher.smaller_is_better = false;  // a growing loss is "better" now
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  const std::vector<double> losses = ValidationLosses(trial->events());
  ASSERT_EQ(losses.size(), 3u);
  ASSERT_TRUE(losses[0] < losses[1] && losses[1] < losses[2]);
  EXPECT_THAT(
      trial->events().timeline,
      ElementsAre("validation@4", "checkpoint@4", "training@5", "validation@8", "checkpoint@8",
                  "training@10", "training@12", "validation@12", "checkpoint@12"));
}

TEST_F(TrialRunnerTest, InitialValidationIsNeverCheckpointed) {
  ExperimentConfig config = DivergingConfig(CheckpointPolicy::kAll);
  config.perform_initial_validation = true;
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  ASSERT_GE(trial->events().timeline.size(), 2u);
  EXPECT_EQ(trial->events().timeline[0], "validation@0");
  EXPECT_EQ(trial->events().timeline[1], "validation@4");
  for (const CheckpointReport& report : trial->events().checkpoints) {
    EXPECT_GT(report.batches, 0u);
  }
}

}  // namespace
}  // namespace cohort::trial_test
