// TrialRunner with optimizations.nonfinite_gradients, on one slot: c_quadratic puts a NaN in the
// gradient of a chosen batch. "fail" ends the trial naming the batch and the tensor; "skip" drops
// that step and trains on, matching a replay that leaves the batch out; "ignore" (the default)
// steps anyway, as Determined does, and the NaN reaches the parameters.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kQuadraticPlugin[] = "test/c_quadratic.so";
constexpr uint64_t kBatches = 6;
constexpr uint64_t kNanBatch = 3;
constexpr double kLearningRate = 0.25;

ExperimentConfig PolicyConfig(NonfiniteGradients policy) {
  ExperimentConfig config = QuadraticConfig(kBatches);
  config.optimizations.nonfinite_gradients = policy;
  config.hyperparameters.Set("learning_rate", kLearningRate);
  config.hyperparameters.Set("nan_batch", static_cast<double>(kNanBatch));
  return config;
}

// c_quadratic trained on one slot with plain SGD in plain code, leaving out batch `skipped`
// (1-based; 0 skips none): x starts at 0, the gradient of a batch is the mean of x - t_r with
// t_r[j] = r % 5 + j over its records.
std::vector<double> ReplayQuadratic(uint64_t skipped) {
  RecordSampler sampler(/*records=*/10, kTrialSeed, /*batch=*/2, 0, 1);
  std::vector<double> x(3, 0.0);
  for (uint64_t t = 0; t < kBatches; ++t) {
    if (t + 1 == skipped) continue;
    const BatchSpec batch = sampler.TrainingBatch(t);
    for (size_t j = 0; j < x.size(); ++j) {
      double gradient = 0;
      for (uint64_t r : batch.record_indices) {
        gradient += (x[j] - static_cast<double>(r % 5 + j)) /
                    static_cast<double>(batch.record_indices.size());
      }
      x[j] -= kLearningRate * gradient;
    }
  }
  return x;
}

std::vector<float> Parameters(TrialHarness& trial) {
  const float* x = static_cast<const float*>(trial.model().arena().data(0));
  return std::vector<float>(x, x + 3);
}

class NonFiniteGradientTest : public ::testing::Test {
 protected:
  TempFolder folder_;
};

TEST_F(NonFiniteGradientTest, FailEndsTheTrialNamingTheBatchAndTheTensor) {
  auto trial = TrialHarness::Create(kQuadraticPlugin, PolicyConfig(NonfiniteGradients::kFail),
                                    folder_.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  absl::StatusOr<TrialExit> exit = (*trial)->runner().Run();
  ASSERT_FALSE(exit.ok());
  const std::string message(exit.status().message());
  EXPECT_THAT(message, HasSubstr("batch 3: the gradient is not finite"));
  EXPECT_THAT(message, HasSubstr("tensor 'x' element 0 is nan"));
  EXPECT_THAT(message, HasSubstr("optimizations.nonfinite_gradients is fail"));
  EXPECT_EQ((*trial)->runner().batches_trained(), kNanBatch);
  for (float v : Parameters(**trial)) EXPECT_TRUE(std::isfinite(v)) << "the bad step was taken";
}

TEST_F(NonFiniteGradientTest, SkipDropsThatStepAndTrainsOn) {
  auto trial = TrialHarness::Create(kQuadraticPlugin, PolicyConfig(NonfiniteGradients::kSkip),
                                    folder_.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  absl::StatusOr<TrialExit> exit = (*trial)->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kCompleted);
  EXPECT_THAT((*trial)->events().notices,
              ElementsAre("batch 3: the gradient is not finite (tensor 'x' element 0 is nan); "
                          "optimizer step skipped (optimizations.nonfinite_gradients: skip)",
                          // The first skip is a warning too (then the 10th, 100th...).
                          "warning: 1 optimizer step skipped for a gradient that is not finite "
                          "since this attempt began (the latest at batch 3); the trial's log "
                          "names each"));
  const std::vector<double> expected = ReplayQuadratic(kNanBatch);
  const std::vector<float> got = Parameters(**trial);
  for (size_t j = 0; j < expected.size(); ++j) EXPECT_NEAR(got[j], expected[j], 1e-5) << j;
  // Leaving the batch out is what happened, not a coincidence of the data.
  EXPECT_GT(std::abs(ReplayQuadratic(0)[0] - expected[0]), 1e-3);
}

TEST_F(NonFiniteGradientTest, IgnoreStepsAnywayByDefault) {
  EXPECT_EQ(ExperimentConfig().optimizations.nonfinite_gradients, NonfiniteGradients::kIgnore);
  auto trial = TrialHarness::Create(kQuadraticPlugin, PolicyConfig(NonfiniteGradients::kIgnore),
                                    folder_.path());
  ASSERT_TRUE(trial.ok()) << trial.status();
  ASSERT_TRUE((*trial)->runner().Run().ok());
  EXPECT_TRUE(std::isnan(Parameters(**trial)[0]));
  EXPECT_TRUE((*trial)->events().notices.empty());
}

}  // namespace
}  // namespace cohort::trial_test
