// TrialRunner with aggregation_frequency: the optimizer steps every k batches and after the last,
// shorter window, with gradients averaged over the window's batches (or summed), checked against
// a replay of linreg in plain code; events fall due at the first step that reaches their period.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/linreg/linreg_data.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// The linreg trial of `config` on one slot, replayed in plain code from linreg_data.h: float
// parameters from zero, gradients summed into float as the plugin adds them, averaged over each
// window of aggregation_frequency batches (the last one may be shorter) when asked, plain SGD.
std::vector<double> ReplayLinregSgd(const ExperimentConfig& config, uint64_t trial_seed) {
  const uint64_t dim = 3, records = 40, batch_size = config.global_batch_size;
  const double lr = *config.hyperparameters.GetDouble("learning_rate");
  const uint64_t total = config.searcher.max_length.value;
  const uint64_t k = config.optimizations.aggregation_frequency;
  RecordSampler sampler(records, trial_seed, batch_size, 0, 1);
  std::vector<float> params(dim + 1, 0.0f), grads(dim + 1, 0.0f);  // weight..., bias
  uint64_t window = 0;
  for (uint64_t t = 0; t < total; ++t) {
    const BatchSpec batch = sampler.TrainingBatch(t);
    std::vector<double> sum(dim + 1, 0.0);
    for (uint64_t i : batch.record_indices) {
      double y_hat = params[dim];
      for (uint64_t j = 0; j < dim; ++j) {
        y_hat += params[j] * linreg::Feature(COHORT_SPLIT_TRAINING, i, j);
      }
      const double error = y_hat - linreg::Target(COHORT_SPLIT_TRAINING, i, dim);
      for (uint64_t j = 0; j < dim; ++j) {
        sum[j] += error * linreg::Feature(COHORT_SPLIT_TRAINING, i, j);
      }
      sum[dim] += error;
    }
    const double scale = 1.0 / static_cast<double>(batch.record_indices.size());
    for (uint64_t j = 0; j <= dim; ++j) grads[j] += static_cast<float>(sum[j] * scale);
    ++window;
    if ((t + 1) % k != 0 && t + 1 != total) continue;
    const double divisor =
        config.optimizations.average_aggregated_gradients ? static_cast<double>(window) : 1.0;
    for (uint64_t j = 0; j <= dim; ++j) {
      params[j] = static_cast<float>(params[j] - lr * (grads[j] / divisor));
      grads[j] = 0;
    }
    window = 0;
  }
  return std::vector<double>(params.begin(), params.end());
}

std::vector<double> LinregParameters(TrialHarness& trial) {
  const float* weight = static_cast<const float*>(trial.model().arena().data(0));
  const float* bias = static_cast<const float*>(trial.model().arena().data(1));
  return {weight[0], weight[1], weight[2], bias[0]};
}

// Parameters within float rounding of the replay's.
std::vector<::testing::Matcher<double>> Near(const std::vector<double>& expected) {
  std::vector<::testing::Matcher<double>> matchers;
  for (double value : expected) matchers.push_back(::testing::DoubleNear(value, 1e-5));
  return matchers;
}

ExperimentConfig AggregatingConfig(uint64_t batches, uint32_t aggregation_frequency) {
  ExperimentConfig config = LinregConfig();
  config.searcher.max_length = Batches(batches);
  config.scheduling_unit = 1;
  config.optimizations.aggregation_frequency = aggregation_frequency;
  config.hyperparameters.Set("init_scale", 0.0);
  config.hyperparameters.Set("momentum", 0.0);
  config.hyperparameters.Set("learning_rate", 0.1);
  return config;
}

TEST_F(TrialRunnerTest, AggregationStepsEveryKBatchesAndAfterTheLastPartialWindow) {
  const ExperimentConfig config = AggregatingConfig(10, 3);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_EQ(trial->optimizer()->steps_taken(), 4u);  // after batches 3, 6, 9 and 10
  EXPECT_THAT(trial->events().stop_asked_at, ElementsAre(3, 6, 9));
  EXPECT_THAT(trial->events().timeline,
              ElementsAre("training@3", "training@6", "training@9", "training@10", "validation@10",
                          "checkpoint@10"));
  // The reference divides the last window by 1 (its length), not by 3.
  EXPECT_THAT(LinregParameters(*trial),
              ElementsAreArray(Near(ReplayLinregSgd(config, kTrialSeed))));
}

TEST_F(TrialRunnerTest, LastWindowOfTwoBatchesIsAveragedOverTwo) {
  const ExperimentConfig config = AggregatingConfig(11, 3);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_EQ(trial->optimizer()->steps_taken(), 4u);  // after batches 3, 6, 9 and 11
  EXPECT_THAT(LinregParameters(*trial),
              ElementsAreArray(Near(ReplayLinregSgd(config, kTrialSeed))));
}

TEST_F(TrialRunnerTest, AggregatedGradientsAreSummedWhenNotAveraged) {
  ExperimentConfig config = AggregatingConfig(8, 4);
  config.optimizations.average_aggregated_gradients = false;
  config.hyperparameters.Set("learning_rate", 0.02);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_EQ(trial->optimizer()->steps_taken(), 2u);
  EXPECT_THAT(LinregParameters(*trial),
              ElementsAreArray(Near(ReplayLinregSgd(config, kTrialSeed))));
}

TEST_F(TrialRunnerTest, EveryBatchStepsWithoutAggregation) {
  const ExperimentConfig config = AggregatingConfig(7, 1);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_EQ(trial->optimizer()->steps_taken(), 7u);
  EXPECT_THAT(LinregParameters(*trial),
              ElementsAreArray(Near(ReplayLinregSgd(config, kTrialSeed))));
}

// Periods are counted in batches but checked only after optimizer steps. A period that is not a
// multiple of aggregation_frequency must still be honoured at the first step that reaches it
// (batch 12 for a period of 10 with steps every 3 batches), not only at common multiples (30).
TEST_F(TrialRunnerTest, PeriodsOffTheAggregationWindowFireAtTheNextStep) {
  ExperimentConfig config = AggregatingConfig(24, 3);
  config.scheduling_unit = 5;
  config.min_validation_period = Batches(10);
  config.min_checkpoint_period = Batches(10);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_THAT(trial->events().timeline,
              ElementsAre("training@6", "training@12", "validation@12", "checkpoint@12",
                          "training@15", "training@21", "validation@21", "checkpoint@21",
                          "training@24", "validation@24", "checkpoint@24"));
}

TEST_F(TrialRunnerTest, StopWaitsForTheAggregationWindow) {
  ExperimentConfig config = AggregatingConfig(12, 3);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  trial->events().stop_after_batches = 4;
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kStopped);
  EXPECT_EQ(trial->runner().batches_trained(), 6u) << "checkpoints only right after a step";
  EXPECT_THAT(trial->events().stop_asked_at, ElementsAre(3, 6));
  ASSERT_EQ(trial->events().checkpoints.size(), 1u);
  EXPECT_EQ(trial->events().checkpoints[0].id, "trial-1-batch-6");
}

}  // namespace
}  // namespace cohort::trial_test
