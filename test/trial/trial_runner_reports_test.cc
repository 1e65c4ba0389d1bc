// TrialRunner over a real linreg model, optimizer and shared_fs storage: which reports,
// validations and checkpoints happen when, progress reports, and a searcher metric the plugin
// does not report.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/linreg/linreg_data.h"
#include "runtime/base/permanent_failure.h"
#include "test/common/host_memory_as_device.h"
#include "test/trial/trial_harness.h"

namespace cohort::trial_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// linreg's mean validation loss for the model's current parameters, recomputed from
// linreg_data.h's formulas.
double LinregValidationLoss(TrialHarness& trial, uint64_t dim, uint64_t records) {
  const float* weight = static_cast<const float*>(trial.model().arena().data(0));
  const float bias = *static_cast<const float*>(trial.model().arena().data(1));
  double total = 0;
  for (uint64_t i = 0; i < records; ++i) {
    double y_hat = bias;
    for (uint64_t j = 0; j < dim; ++j) {
      y_hat += weight[j] * linreg::Feature(COHORT_SPLIT_VALIDATION, i, j);
    }
    const double error = y_hat - linreg::Target(COHORT_SPLIT_VALIDATION, i, dim);
    total += 0.5 * error * error;
  }
  return total / static_cast<double>(records);
}

TEST_F(TrialRunnerTest, ReportsValidationsAndCheckpointsOnSchedule) {
  ExperimentConfig config = LinregConfig();  // 20 batches, training reports every 5
  config.min_validation_period = Batches(10);
  config.min_checkpoint_period = Batches(10);
  config.perform_initial_validation = true;
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->runner().schedule().total_batches, 20u);

  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kCompleted);
  EXPECT_EQ(trial->runner().batches_trained(), 20u);
  const RecordingEvents& events = trial->events();
  EXPECT_THAT(events.timeline, ElementsAre("validation@0", "training@5", "training@10",
                                           "validation@10", "checkpoint@10", "training@15",
                                           "training@20", "validation@20", "checkpoint@20"));

  for (const MetricsReport& report : events.metrics) {
    EXPECT_EQ(report.trial_id, 1u);
    EXPECT_EQ(report.records, report.batches * 8);
    EXPECT_DOUBLE_EQ(report.unix_time, 1.7e9 + 100);
    ASSERT_NE(FindNamed(report, "loss"), nullptr);
    EXPECT_TRUE(std::isfinite(FindNamed(report, "loss")->value));
  }
  // Each training report covers the batches since the previous one; linreg's batch count
  // (reduced with MAX) says up to where.
  for (const MetricsReport& report : events.Reports(ReportKind::kTraining)) {
    ASSERT_NE(FindNamed(report, "batches_seen"), nullptr);
    EXPECT_EQ(FindNamed(report, "batches_seen")->value, static_cast<double>(report.batches));
  }
  for (const MetricsReport& report : events.Reports(ReportKind::kValidation)) {
    EXPECT_EQ(FindNamed(report, "batches_seen"), nullptr) << "linreg reports it only in training";
  }
  // The final validation averages all 12 validation records (batches of 8 and 4) with the final
  // parameters.
  EXPECT_NEAR(FindNamed(events.Reports(ReportKind::kValidation).back(), "loss")->value,
              LinregValidationLoss(*trial, 3, 12), 1e-12);

  ASSERT_EQ(events.checkpoints.size(), 2u);
  EXPECT_EQ(events.checkpoints[0],
            (CheckpointReport{1, "trial-1-batch-10", 10, 80, events.checkpoints[0].bytes}));
  EXPECT_EQ(events.checkpoints[1],
            (CheckpointReport{1, "trial-1-batch-20", 20, 160, events.checkpoints[1].bytes}));
  EXPECT_GT(events.checkpoints[0].bytes, 0u);
  absl::StatusOr<std::vector<CheckpointInfo>> stored = trial->storage().List();
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ((*stored)[0].id, "trial-1-batch-10");
  EXPECT_EQ((*stored)[0].batches_trained, 10u);
  EXPECT_EQ((*stored)[0].records_trained, 80u);
  EXPECT_EQ((*stored)[0].config_fingerprint, TrainingFingerprint(config));
  EXPECT_EQ((*stored)[1].id, "trial-1-batch-20");

  // Asked after every optimizer step but the last; the final progress report is forced.
  std::vector<uint64_t> asked;
  for (uint64_t b = 1; b < 20; ++b) asked.push_back(b);
  EXPECT_EQ(events.stop_asked_at, asked);
  ASSERT_FALSE(events.progress.empty());
  EXPECT_EQ(events.progress.back().batches, 20u);
  EXPECT_EQ(events.progress.back().total_batches, 20u);
  EXPECT_EQ(events.progress.back().records, 160u);
}

TEST_F(TrialRunnerTest, WithoutPeriodsValidatesAndCheckpointsOnlyAtTheEnd) {
  std::unique_ptr<TrialHarness> trial = Trial(LinregConfig());
  ASSERT_NE(trial, nullptr);
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_THAT(trial->events().timeline,
              ElementsAre("training@5", "training@10", "training@15", "training@20",
                          "validation@20", "checkpoint@20"));
}

// A validation pass says it is still working after each of its batches, so the worker's
// heartbeats go on through a long one.
TEST_F(TrialRunnerTest, ValidationSaysItIsStillWorkingAfterEveryBatch) {
  std::unique_ptr<TrialHarness> once = Trial(LinregConfig());
  ASSERT_NE(once, nullptr);
  ASSERT_TRUE(once->runner().Run().ok());
  const uint64_t per_pass = once->events().still_working;
  EXPECT_GT(per_pass, 1u);
  ExperimentConfig config = LinregConfig();
  config.min_validation_period = Batches(10);
  std::unique_ptr<TrialHarness> twice = Trial(config);
  ASSERT_NE(twice, nullptr);
  ASSERT_TRUE(twice->runner().Run().ok());
  ASSERT_EQ(twice->events().Reports(ReportKind::kValidation).size(), 2u);
  EXPECT_EQ(twice->events().still_working, 2 * per_pass);
}

TEST_F(TrialRunnerTest, TheEndIsAlwaysReportedEvenOffThePeriod) {
  ExperimentConfig config = LinregConfig();
  config.searcher.max_length = Batches(11);
  config.scheduling_unit = 3;
  config.min_validation_period = Batches(4);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  ASSERT_TRUE(trial->runner().Run().ok());
  EXPECT_THAT(trial->events().timeline,
              ElementsAre("training@3", "validation@4", "training@6", "validation@8", "training@9",
                          "training@11", "validation@11", "checkpoint@11"));
}

TEST_F(TrialRunnerTest, ProgressReportsFollowTheClock) {
  std::unique_ptr<TrialHarness> trial = Trial(LinregConfig());
  ASSERT_NE(trial, nullptr);
  trial->events().seconds_per_step = 0.1;  // the interval is 0.25 s: a report every third batch
  ASSERT_TRUE(trial->runner().Run().ok());
  std::vector<uint64_t> batches;
  for (const ProgressReport& report : trial->events().progress) batches.push_back(report.batches);
  EXPECT_THAT(batches, ElementsAre(1, 4, 7, 10, 13, 16, 19, 20)) << "the last one is forced";
  const std::vector<ProgressReport>& progress = trial->events().progress;
  for (const ProgressReport& report : progress) {
    EXPECT_EQ(report.trial_id, 1u);
    EXPECT_EQ(report.total_batches, 20u);
    EXPECT_EQ(report.records, report.batches * 8);
    EXPECT_TRUE(std::isfinite(report.latest_loss));
    EXPECT_GT(report.latest_loss, 0);
  }
  // The rate is measured over windows of more than half a second: 56 records in the first 0.6 s,
  // then 8 records every 0.1 s.
  EXPECT_EQ(progress[1].records_per_second, 0);
  EXPECT_NEAR(progress[2].records_per_second, 56 / 0.6, 1e-6);
  EXPECT_NEAR(progress[4].records_per_second, 80, 1e-6);
}

// Each training report says where the training thread's time went since the previous one and
// the throughput then. The clock moves only when StopRequested is asked, after each step: 0.1 s
// a batch, batches of 8, a training report every 5 batches.
TEST_F(TrialRunnerTest, TrainingReportsSayWhereTheTimeWentAndTheThroughput) {
  std::unique_ptr<TrialHarness> trial = Trial(LinregConfig());
  ASSERT_NE(trial, nullptr);
  trial->events().seconds_per_step = 0.1;
  ASSERT_TRUE(trial->runner().Run().ok());
  const std::vector<MetricsReport> reports = trial->events().Reports(ReportKind::kTraining);
  ASSERT_EQ(reports.size(), 4u);
  const std::vector<std::string> keys = {"data",    "compute",    "exchange_wait", "optimizer",
                                         "metrics", "validation", "checkpoint"};
  for (size_t r = 0; r < reports.size(); ++r) {
    SCOPED_TRACE(r);
    double total = 0;
    for (const NamedValue& timing : reports[r].timings) {
      EXPECT_THAT(keys, ::testing::Contains(timing.name));
      EXPECT_GT(timing.value, 0);
      total += timing.value;
    }
    // The first window holds the StopRequested of batches 1 to 4, later ones five of them.
    const double seconds = r == 0 ? 0.4 : 0.5;
    EXPECT_NEAR(total, seconds, 1e-9);
    EXPECT_NEAR(reports[r].records_per_second, 40 / seconds, 1e-6);
  }
  EXPECT_TRUE(trial->events().Reports(ReportKind::kValidation).back().timings.empty());
}

// A validation trains nothing: its time shows as the report's validation timing and is left out
// of records_per_second, so the report after it shows the training pace.
TEST_F(TrialRunnerTest, TheThroughputLeavesOutTheTimeSpentValidating) {
  ExperimentConfig config = LinregConfig();
  config.min_validation_period = Batches(5);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  trial->events().seconds_per_step = 0.1;
  trial->events().seconds_per_validation = 2.0;
  ASSERT_TRUE(trial->runner().Run().ok());
  const std::vector<MetricsReport> reports = trial->events().Reports(ReportKind::kTraining);
  ASSERT_EQ(reports.size(), 4u);
  for (size_t r = 1; r < reports.size(); ++r) {
    SCOPED_TRACE(r);
    double validation = 0;
    for (const NamedValue& timing : reports[r].timings) {
      if (timing.name == "validation") validation = timing.value;
    }
    EXPECT_GE(validation, 2.0);  // the validation after the previous report's batch
    EXPECT_NEAR(reports[r].records_per_second, 40 / 0.5, 1e-6);
  }
}

TEST_F(TrialRunnerTest, SearcherMetricThePluginDoesNotReportFailsBeforeTheFirstBatch) {
  ExperimentConfig config = LinregConfig();
  config.searcher.metric = "accuracy";
  config.min_validation_period = Batches(10);
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_FALSE(exit.ok());
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(exit.status().message());
  EXPECT_THAT(message, HasSubstr("searcher.metric"));
  EXPECT_THAT(message, HasSubstr("accuracy"));
  EXPECT_THAT(message, HasSubstr("(loss)")) << "lists the metrics the plugin reports";
  EXPECT_THAT(message, HasSubstr("linreg"));
  EXPECT_TRUE(IsPermanentFailure(exit.status())) << "every attempt would fail the same way";
  EXPECT_EQ(trial->runner().batches_trained(), 0u)
      << "one validation batch before the first training batch finds it";
  EXPECT_THAT(trial->events().timeline, IsEmpty());
}

TEST_F(TrialRunnerTest, InitialValidationChecksTheSearcherMetricBeforeTraining) {
  ExperimentConfig config = LinregConfig();
  config.searcher.metric = "validation_error";
  config.perform_initial_validation = true;
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_FALSE(exit.ok());
  EXPECT_THAT(std::string(exit.status().message()), HasSubstr("validation_error"));
  EXPECT_EQ(trial->runner().batches_trained(), 0u);
  EXPECT_THAT(trial->events().timeline, IsEmpty());
}

TEST_F(TrialRunnerTest, SearcherMetricWithValidationPrefixIsFound) {
  ExperimentConfig config = LinregConfig();
  config.searcher.metric = "validation_loss";
  std::unique_ptr<TrialHarness> trial = Trial(config);
  ASSERT_NE(trial, nullptr);
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(*exit, TrialExit::kCompleted);
}

// c_quadratic reporting its training loss through metric_add_device, with a reader that counts
// how often the device's values are read.
TEST_F(TrialRunnerTest, MetricsStillOnTheDeviceAreReadOncePerReportAndMatch) {
  ExperimentConfig config = QuadraticConfig(12);
  config.scheduling_unit = 4;
  config.min_validation_period = Batches(8);
  auto direct = TrialHarness::Create("test/c_quadratic.so", config, folder_.path() + "/direct");
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_TRUE((*direct)->runner().Run().ok());

  config.hyperparameters.Set("device_metrics", 1);
  testing::HostValueReader reader;
  auto deferred = TrialHarness::Create("test/c_quadratic.so", config, folder_.path() + "/deferred",
                                       1, 1234, true, &reader);
  ASSERT_TRUE(deferred.ok()) << deferred.status();
  ASSERT_TRUE((*deferred)->runner().Run().ok());

  EXPECT_EQ(reader.captures, 12);  // one per training batch
  EXPECT_EQ(reader.takes, 3);      // one per training report (batches 4, 8, 12), not per batch
  for (ReportKind kind : {ReportKind::kTraining, ReportKind::kValidation}) {
    const std::vector<MetricsReport> want = (*direct)->events().Reports(kind);
    const std::vector<MetricsReport> got = (*deferred)->events().Reports(kind);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].batches, want[i].batches);
      ASSERT_EQ(got[i].metrics.size(), want[i].metrics.size());
      for (size_t m = 0; m < want[i].metrics.size(); ++m) {
        EXPECT_EQ(got[i].metrics[m].name, want[i].metrics[m].name);
        EXPECT_EQ(got[i].metrics[m].value, want[i].metrics[m].value) << got[i].metrics[m].name;
      }
    }
  }
  EXPECT_EQ((*deferred)->ParameterBytes(), (*direct)->ParameterBytes());
}

TEST_F(TrialRunnerTest, MetricsStillOnTheDeviceAreReadAtLeastEvery1024Batches) {
  ExperimentConfig config = QuadraticConfig(2500);
  config.scheduling_unit = 2500;  // one training report, at the end
  config.hyperparameters.Set("device_metrics", 1);
  testing::HostValueReader reader;
  auto trial =
      TrialHarness::Create("test/c_quadratic.so", config, folder_.path(), 1, 1234, true, &reader);
  ASSERT_TRUE(trial.ok()) << trial.status();
  ASSERT_TRUE((*trial)->runner().Run().ok());
  EXPECT_EQ(reader.captures, 2500);
  EXPECT_EQ(reader.takes, 3);  // after 1024 and 2048 batches, and at the report
  const std::vector<MetricsReport> training = (*trial)->events().Reports(ReportKind::kTraining);
  ASSERT_EQ(training.size(), 1u);
  EXPECT_EQ(training[0].batches, 2500u);
}

TEST_F(TrialRunnerTest, MlpTrialRunsToTheEnd) {
  std::unique_ptr<TrialHarness> trial = Trial(MlpConfig(), kMlpPlugin);
  ASSERT_NE(trial, nullptr);
  absl::StatusOr<TrialExit> exit = trial->runner().Run();
  ASSERT_TRUE(exit.ok()) << exit.status();
  const std::vector<MetricsReport> validations = trial->events().Reports(ReportKind::kValidation);
  ASSERT_EQ(validations.size(), 1u);
  EXPECT_EQ(validations[0].batches, 24u);
  EXPECT_NE(FindNamed(validations[0], "loss"), nullptr);
  EXPECT_NE(FindNamed(validations[0], "accuracy"), nullptr);
}

TEST_F(TrialRunnerTest, CreateRefusesALengthOfLessThanOneBatch) {
  ExperimentConfig config = LinregConfig();
  config.searcher.max_length = {LengthUnit::kRecords, 0};
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
      TrialHarness::Create(kLinregPlugin, config, folder_.path());
  ASSERT_FALSE(trial.ok());
  EXPECT_EQ(trial.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(trial.status().message()), HasSubstr("searcher.max_length"));
}

TEST_F(TrialRunnerTest, PluginWithoutOptimizerStepAndNoBuiltInOptimizerFails) {
  absl::StatusOr<std::unique_ptr<TrialHarness>> trial = TrialHarness::Create(
      kLinregPlugin, LinregConfig(), folder_.path(), 1, kTrialSeed, /*builtin_optimizer=*/false);
  ASSERT_FALSE(trial.ok());
  EXPECT_EQ(trial.status().code(), absl::StatusCode::kFailedPrecondition) << trial.status();
  EXPECT_THAT(std::string(trial.status().message()), HasSubstr("no optimizer_step"));
}

}  // namespace
}  // namespace cohort::trial_test
