// TrialRunner::Restore: a trial stopped at batch k and resumed in a fresh process (model,
// optimizer, runner) ends with parameters bitwise identical to an uninterrupted run; a checkpoint
// of another trial, of other settings or of another trial seed is refused.
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<TrialHarness> MakeTrial(const std::string& plugin, const ExperimentConfig& config,
                                        const std::string& root, uint64_t trial_id = 1,
                                        uint64_t seed = kTrialSeed) {
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
      TrialHarness::Create(plugin, config, root, trial_id, seed);
  EXPECT_TRUE(trial.ok()) << trial.status();
  return trial.ok() ? *std::move(trial) : nullptr;
}

// Restores `trial` from the newest checkpoint of trial 1 in its storage.
absl::Status RestoreLatest(TrialHarness& trial) {
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(trial.storage(), 1);
  if (!latest.ok()) return latest.status();
  return trial.runner().Restore(latest->id);
}

struct ResumeCase {
  std::string name;
  std::string plugin;
  ExperimentConfig config;
  std::vector<uint64_t> stops;  // stop once this many batches are trained, then resume; in order
  std::vector<uint64_t> stopped_at;  // where each stop really happened (after a step)
};

void PrintTo(const ResumeCase& c, std::ostream* os) { *os << c.name; }

std::vector<ResumeCase> ResumeCases() {
  ExperimentConfig linreg = LinregConfig();  // SGD with momentum, plugin state
  linreg.min_validation_period = Batches(10);
  linreg.min_checkpoint_period = Batches(10);
  ExperimentConfig linreg_aggregated = linreg;
  linreg_aggregated.optimizations.aggregation_frequency = 3;  // 20 = 6 * 3 + 2
  ExperimentConfig mlp = MlpConfig();  // Adam; 100 records in batches of 16 straddle epochs
  mlp.min_validation_period = Batches(8);
  mlp.perform_initial_validation = true;
  ExperimentConfig mlp_aggregated = mlp;
  mlp_aggregated.optimizations.aggregation_frequency = 2;
  return {
      {"linreg_stop_at_7", kLinregPlugin, linreg, {7}, {7}},
      {"linreg_stop_at_a_checkpoint", kLinregPlugin, linreg, {10}, {10}},
      {"linreg_stop_twice", kLinregPlugin, linreg, {3, 12}, {3, 12}},
      {"linreg_aggregated_stop_mid_window", kLinregPlugin, linreg_aggregated, {4, 17}, {6, 18}},
      {"mlp_stop_at_9", kMlpPlugin, mlp, {9}, {9}},
      {"mlp_aggregated_stop_at_13", kMlpPlugin, mlp_aggregated, {13}, {14}},
  };
}

class TrialResumeTest : public ::testing::TestWithParam<ResumeCase> {};

// THE property: a trial stopped and resumed (any number of times, each time in fresh objects)
// ends exactly where the uninterrupted trial ends.
TEST_P(TrialResumeTest, ResumedTrialEndsBitwiseIdenticalToAnUninterruptedOne) {
  const ResumeCase& c = GetParam();
  const uint64_t total = c.config.searcher.max_length.value;

  TempFolder folder_a, folder_b;
  std::unique_ptr<TrialHarness> a = MakeTrial(c.plugin, c.config, folder_a.path());
  ASSERT_NE(a, nullptr);
  absl::StatusOr<TrialExit> exit_a = a->runner().Run();
  ASSERT_TRUE(exit_a.ok()) << exit_a.status();
  ASSERT_EQ(*exit_a, TrialExit::kCompleted);

  std::unique_ptr<TrialHarness> b;
  for (size_t i = 0; i <= c.stops.size(); ++i) {
    b = MakeTrial(c.plugin, c.config, folder_b.path());  // a fresh process, as after a restart
    ASSERT_NE(b, nullptr);
    if (i > 0) {
      absl::Status restored = RestoreLatest(*b);
      ASSERT_TRUE(restored.ok()) << restored;
      EXPECT_EQ(b->runner().batches_trained(), c.stopped_at[i - 1]);
    }
    if (i < c.stops.size()) b->events().stop_after_batches = c.stops[i];
    absl::StatusOr<TrialExit> exit_b = b->runner().Run();
    ASSERT_TRUE(exit_b.ok()) << exit_b.status();
    if (i < c.stops.size()) {
      ASSERT_EQ(*exit_b, TrialExit::kStopped);
      ASSERT_EQ(b->runner().batches_trained(), c.stopped_at[i]);
    } else {
      ASSERT_EQ(*exit_b, TrialExit::kCompleted);
    }
    if (i > 0) {
      // A resumed run neither validates nor checkpoints again where it restarted.
      for (const MetricsReport& report : b->events().metrics) {
        EXPECT_GT(report.batches, c.stopped_at[i - 1]);
      }
      for (const CheckpointReport& report : b->events().checkpoints) {
        EXPECT_GT(report.batches, c.stopped_at[i - 1]);
      }
    }
  }
  ASSERT_EQ(b->runner().batches_trained(), total);

  const std::string params_a = a->ParameterBytes();
  const std::string params_b = b->ParameterBytes();
  ASSERT_EQ(params_a.size(), params_b.size());
  EXPECT_EQ(std::memcmp(params_a.data(), params_b.data(), params_a.size()), 0)
      << "parameters differ after resuming";
  if (a->optimizer() != nullptr) {
    EXPECT_EQ(a->optimizer()->SaveState(), b->optimizer()->SaveState());
  }
  // The final checkpoints hold the same bytes, file for file (plugin state included).
  const std::string last = CheckpointId(1, total);
  absl::StatusOr<Checkpoint> final_a = a->storage().Read(last);
  absl::StatusOr<Checkpoint> final_b = b->storage().Read(last);
  ASSERT_TRUE(final_a.ok()) << final_a.status();
  ASSERT_TRUE(final_b.ok()) << final_b.status();
  EXPECT_EQ(final_a->files, final_b->files);
  EXPECT_EQ(final_a->info.records_trained, final_b->info.records_trained);
  // And the final validation agrees exactly.
  const MetricsReport validation_a = a->events().Reports(ReportKind::kValidation).back();
  const MetricsReport validation_b = b->events().Reports(ReportKind::kValidation).back();
  EXPECT_EQ(validation_a.batches, total);
  EXPECT_EQ(validation_a.metrics, validation_b.metrics);
}

INSTANTIATE_TEST_SUITE_P(Plugins, TrialResumeTest, ::testing::ValuesIn(ResumeCases()),
                         [](const ::testing::TestParamInfo<ResumeCase>& info) {
                           return info.param.name;
                         });

class TrialRestoreTest : public ::testing::Test {
 protected:
  // Trial 1 of LinregConfig stopped after 5 batches: checkpoint "trial-1-batch-5".
  void SetUp() override {
    std::unique_ptr<TrialHarness> trial = MakeTrial(kLinregPlugin, LinregConfig(), folder_.path());
    ASSERT_NE(trial, nullptr);
    trial->events().stop_after_batches = 5;
    absl::StatusOr<TrialExit> exit = trial->runner().Run();
    ASSERT_TRUE(exit.ok()) << exit.status();
    ASSERT_EQ(*exit, TrialExit::kStopped);
  }

  TempFolder folder_;
};

TEST_F(TrialRestoreTest, RefusesACheckpointOfAnotherTrial) {
  std::unique_ptr<TrialHarness> other =
      MakeTrial(kLinregPlugin, LinregConfig(), folder_.path(), /*trial_id=*/2);
  ASSERT_NE(other, nullptr);
  const std::string before = other->ParameterBytes();
  const absl::Status status = other->runner().Restore("trial-1-batch-5");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("trial-1-batch-5"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("belongs to trial 1, not trial 2"));
  EXPECT_EQ(other->ParameterBytes(), before);
  EXPECT_EQ(other->runner().batches_trained(), 0u);
}

TEST_F(TrialRestoreTest, RefusesACheckpointTrainedWithOtherHyperparameters) {
  ExperimentConfig faster = LinregConfig();
  faster.hyperparameters.Set("learning_rate", 0.07);
  std::unique_ptr<TrialHarness> other = MakeTrial(kLinregPlugin, faster, folder_.path());
  ASSERT_NE(other, nullptr);
  const std::string before = other->ParameterBytes();
  const absl::Status status = other->runner().Restore("trial-1-batch-5");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("trial-1-batch-5"));
  EXPECT_THAT(message, HasSubstr("other settings"));
  EXPECT_THAT(message, HasSubstr(TrainingFingerprint(LinregConfig())));
  EXPECT_THAT(message, HasSubstr(TrainingFingerprint(faster)));
  EXPECT_THAT(message, HasSubstr("hyperparameters"));
  EXPECT_EQ(other->ParameterBytes(), before);
}

TEST_F(TrialRestoreTest, RefusesACheckpointOfAnotherAggregationFrequency) {
  ExperimentConfig aggregated = LinregConfig();
  aggregated.optimizations.aggregation_frequency = 2;
  std::unique_ptr<TrialHarness> other = MakeTrial(kLinregPlugin, aggregated, folder_.path());
  ASSERT_NE(other, nullptr);
  const absl::Status status = other->runner().Restore("trial-1-batch-5");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("other settings"));
}

TEST_F(TrialRestoreTest, RefusesACheckpointOfAnotherTrialSeed) {
  std::unique_ptr<TrialHarness> other =
      MakeTrial(kLinregPlugin, LinregConfig(), folder_.path(), 1, kTrialSeed + 1);
  ASSERT_NE(other, nullptr);
  const absl::Status status = other->runner().Restore("trial-1-batch-5");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("trial seed"));
  EXPECT_EQ(other->runner().batches_trained(), 0u);
}

TEST_F(TrialRestoreTest, MissingCheckpointIsNotFound) {
  std::unique_ptr<TrialHarness> other = MakeTrial(kLinregPlugin, LinregConfig(), folder_.path());
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->runner().Restore("trial-1-batch-6").code(), absl::StatusCode::kNotFound);
}

// Lengths and periods are not part of the fingerprint: a stopped trial may resume into a longer
// run, and trains exactly the batches that are left.
TEST_F(TrialRestoreTest, ResumesIntoALongerRun) {
  ExperimentConfig longer = LinregConfig();
  longer.searcher.max_length = Batches(30);
  longer.min_validation_period = Batches(10);
  std::unique_ptr<TrialHarness> resumed = MakeTrial(kLinregPlugin, longer, folder_.path());
  ASSERT_NE(resumed, nullptr);
  ASSERT_TRUE(resumed->runner().Restore("trial-1-batch-5").ok());
  EXPECT_EQ(resumed->runner().batches_trained(), 5u);
  absl::StatusOr<TrialExit> exit = resumed->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kCompleted);
  EXPECT_THAT(resumed->events().timeline,
              ::testing::ElementsAre("training@10", "validation@10", "training@15", "training@20",
                                     "validation@20", "training@25", "training@30", "validation@30",
                                     "checkpoint@30"));
  // linreg counts its batches in its state: the count went on from 5.
  const MetricsReport last = resumed->events().Reports(ReportKind::kTraining).back();
  ASSERT_FALSE(last.metrics.empty());
  bool found = false;
  for (const NamedValue& metric : last.metrics) {
    if (metric.name != "batches_seen") continue;
    found = true;
    EXPECT_EQ(metric.value, 30);
  }
  EXPECT_TRUE(found);
}

// The same trial written from a YAML config, as the worker reads it: a resume works the same.
TEST(TrialResumeFromYamlTest, ParsedConfigResumes) {
  constexpr char kYaml[] = R"(
name: linreg-yaml
entrypoint: linreg
hyperparameters:
  global_batch_size: 8
  dim: 3
  train_records: 40
  validation_records: 12
  init_scale: 0.5
  optimizer: sgd
  learning_rate: 0.05
  momentum: 0.9
searcher:
  name: single
  metric: validation_loss
  smaller_is_better: true
  max_length:
    batches: 12
min_validation_period:
  records: 40
scheduling_unit: 4
checkpoint_policy: all
checkpoint_storage:
  async: false  # each checkpoint reported where it is taken, as the timeline below says
)";
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kYaml);
  ASSERT_TRUE(config.ok()) << config.status();
  TempFolder folder_a, folder_b;
  std::unique_ptr<TrialHarness> a = MakeTrial(kLinregPlugin, *config, folder_a.path());
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->runner().schedule().validation_period, 5u);  // ceil(40 / 8)
  ASSERT_TRUE(a->runner().Run().ok());
  EXPECT_THAT(a->events().timeline,
              ::testing::ElementsAre("training@4", "validation@5", "checkpoint@5", "training@8",
                                     "validation@10", "checkpoint@10", "training@12",
                                     "validation@12", "checkpoint@12"));

  std::unique_ptr<TrialHarness> stopped = MakeTrial(kLinregPlugin, *config, folder_b.path());
  ASSERT_NE(stopped, nullptr);
  stopped->events().stop_after_batches = 7;
  ASSERT_TRUE(stopped->runner().Run().ok());
  std::unique_ptr<TrialHarness> resumed = MakeTrial(kLinregPlugin, *config, folder_b.path());
  ASSERT_NE(resumed, nullptr);
  ASSERT_TRUE(RestoreLatest(*resumed).ok());
  ASSERT_TRUE(resumed->runner().Run().ok());
  EXPECT_EQ(resumed->ParameterBytes(), a->ParameterBytes());
}

TEST(CheckpointIdTest, ParsesOnlyWhatCheckpointIdWrites) {
  const std::optional<CheckpointIdParts> parts = ParseCheckpointId(CheckpointId(12, 3400));
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->trial_id, 12u);
  EXPECT_EQ(parts->batches, 3400u);
  for (const char* other : {"trial-1-batch-", "trial-1-batch-07", "trial-x-batch-1",
                            "trial-1-step-5", "trial-1-batch-5-copy", "timelines", ""}) {
    EXPECT_FALSE(ParseCheckpointId(other).has_value()) << other;
  }
}

}  // namespace
}  // namespace cohort::trial_test
