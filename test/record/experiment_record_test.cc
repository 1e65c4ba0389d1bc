// ExperimentRecord: a checkpoint takes the searcher metric of the validation at its own batch,
// also when it is reported after later validations (written in the background), so retention
// ranks it by its own metric; and a rewind forgets validations after the batch it goes back to.
#include "runtime/record/experiment_record.h"

#include <cmath>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace cohort {
namespace {

constexpr uint64_t kRecordedTrial = 1;

ExperimentRecord EmptyRecord() {
  ExperimentRecord record;
  record.searcher_metric = "accuracy";
  record.smaller_is_better = false;
  return record;
}

MetricsReport ValidationAt(uint64_t batches, double accuracy) {
  return {.trial_id = kRecordedTrial,
          .kind = ReportKind::kValidation,
          .batches = batches,
          .metrics = {{"loss", 1 - accuracy}, {"accuracy", accuracy}}};
}

CheckpointReport CheckpointAt(uint64_t batches) {
  return {.trial_id = kRecordedTrial,
          .id = "trial-1-batch-" + std::to_string(batches),
          .batches = batches};
}

std::optional<double> MetricOf(ExperimentRecord& record, uint64_t batches) {
  for (const CheckpointEntry& entry : record.trial(kRecordedTrial).checkpoints) {
    if (entry.batches == batches) return entry.metric;
  }
  ADD_FAILURE() << "no checkpoint at batch " << batches;
  return std::nullopt;
}

TEST(ExperimentRecordTest, ACheckpointReportedAfterLaterValidationsKeepsItsOwnMetric) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(ValidationAt(100, 0.5));
  record.Apply(ValidationAt(200, 0.7));
  record.Apply(ValidationAt(300, 0.6));
  record.Apply(CheckpointAt(100));
  record.Apply(CheckpointAt(200));
  record.Apply(CheckpointAt(300));
  EXPECT_EQ(MetricOf(record, 100), 0.5);
  EXPECT_EQ(MetricOf(record, 200), 0.7);
  EXPECT_EQ(MetricOf(record, 300), 0.6);
  EXPECT_TRUE(record.trial(kRecordedTrial).unmatched_validations.empty());
}

TEST(ExperimentRecordTest, ANanValidationIsNeverTheBest) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(ValidationAt(100, std::nan("")));  // a trial that diverged
  EXPECT_FALSE(record.trial(kRecordedTrial).best_validation.has_value());
  record.Apply(ValidationAt(200, 0.4));
  record.Apply(ValidationAt(300, std::nan("")));
  ASSERT_TRUE(record.trial(kRecordedTrial).best_validation.has_value());
  EXPECT_EQ(record.trial(kRecordedTrial).best_validation->batches, 200u);
}

TEST(ExperimentRecordTest, ACheckpointWithoutAValidationAtItsBatchHasNoMetric) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(ValidationAt(100, 0.5));
  record.Apply(CheckpointAt(150));
  record.Apply(ValidationAt(200, 0.7));
  record.Apply(CheckpointAt(200));
  EXPECT_EQ(MetricOf(record, 150), std::nullopt);
  EXPECT_EQ(MetricOf(record, 200), 0.7);
}

TEST(ExperimentRecordTest, ARecordReadBackFindsTheMetricInItsLatestOrBestValidation) {
  // After an orchestrator restart only what experiment.json holds is known: the latest and the
  // best validation.
  ExperimentRecord record = EmptyRecord();
  record.trial(kRecordedTrial).best_validation = ValidationAt(300, 0.8);
  record.trial(kRecordedTrial).latest_validation = ValidationAt(400, 0.6);
  record.Apply(CheckpointAt(300));
  record.Apply(CheckpointAt(400));
  EXPECT_EQ(MetricOf(record, 300), 0.8);
  EXPECT_EQ(MetricOf(record, 400), 0.6);
}

TEST(ExperimentRecordTest, AValidationDoneAgainAtACheckpointWithoutOneGivesItItsMetric) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(CheckpointAt(300));
  EXPECT_EQ(MetricOf(record, 300), std::nullopt);
  record.Apply(ValidationAt(300, 0.6));
  EXPECT_EQ(MetricOf(record, 300), 0.6);
  record.Apply(ValidationAt(300, 0.9));  // one that has its metric keeps it
  EXPECT_EQ(MetricOf(record, 300), 0.6);
}

TEST(ExperimentRecordTest, ARewindForgetsTheValidationsAfterItsBatch) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(ValidationAt(100, 0.5));
  record.Apply(ValidationAt(200, 0.7));
  record.RewindTrial(kRecordedTrial, 100);
  // Trained again from batch 100: batch 200's new validation is the one its checkpoint takes.
  record.Apply(ValidationAt(200, 0.4));
  record.Apply(CheckpointAt(200));
  EXPECT_EQ(MetricOf(record, 200), 0.4);
}

TEST(ExperimentRecordTest, OnlyTheLatestValidationsWaitForTheirCheckpoint) {
  ExperimentRecord record = EmptyRecord();
  for (uint64_t batches = 1; batches <= 10 * kMaxUnmatchedValidations; ++batches) {
    record.Apply(ValidationAt(batches, 0.001 * static_cast<double>(batches)));
  }
  EXPECT_EQ(record.trial(kRecordedTrial).unmatched_validations.size(), kMaxUnmatchedValidations);
  const uint64_t last = 10 * kMaxUnmatchedValidations;
  record.Apply(CheckpointAt(last - 1));
  EXPECT_EQ(MetricOf(record, last - 1), 0.001 * static_cast<double>(last - 1));
}

}  // namespace
}  // namespace cohort
