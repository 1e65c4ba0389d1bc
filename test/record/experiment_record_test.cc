// ExperimentRecord: a checkpoint takes the searcher metric of the validation at its own batch,
// also when it is reported after later validations (written in the background), so retention
// ranks it by its own metric; and a rewind forgets validations after the batch it goes back to.
#include "runtime/record/experiment_record.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

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
  EXPECT_EQ(record.trial(kRecordedTrial).batches_trained, 100u);
  // Trained again from batch 100: batch 200's new validation is the one its checkpoint takes.
  record.Apply(ValidationAt(200, 0.4));
  record.Apply(CheckpointAt(200));
  EXPECT_EQ(MetricOf(record, 200), 0.4);
}

// Its records go back with its batches, to those of the latest report it keeps, and the reports
// up to the rewind, applied again from metrics.jsonl (RewindTrialRecord), bring them on (they used
// to stay at the rewound batches').
TEST(ExperimentRecordTest, ARewindTakesTheRecordsTrainedBackWithItsBatches) {
  ExperimentRecord record = EmptyRecord();
  auto training_at = [](uint64_t batches) {
    MetricsReport training = ValidationAt(batches, 0.5);
    training.kind = ReportKind::kTraining;
    training.records = 16 * batches;
    return training;
  };
  record.Apply(ValidationAt(100, 0.5));
  for (const uint64_t batches : {100, 200, 300}) record.Apply(training_at(batches));
  EXPECT_EQ(record.trial(kRecordedTrial).records_trained, 4800u);
  record.RewindTrial(kRecordedTrial, 250);
  EXPECT_EQ(record.trial(kRecordedTrial).batches_trained, 250u);
  EXPECT_EQ(record.trial(kRecordedTrial).records_trained, 0u);  // batch 100's validation has none
  record.Apply(training_at(200));
  EXPECT_EQ(record.trial(kRecordedTrial).records_trained, 3200u);
  record.RewindTrial(kRecordedTrial, 250);  // at its own batches or later: nothing goes
  EXPECT_EQ(record.trial(kRecordedTrial).records_trained, 3200u);
}

// A checkpoint counts its batches as trained: a trial that failed before the training report
// after it was summed up as trained as far as its last report ("ERROR after 1 of 200 batches"
// beside a checkpoint at batch 50).
TEST(ExperimentRecordTest, ACheckpointCountsItsBatchesAsTrained) {
  ExperimentRecord record = EmptyRecord();
  record.Apply(ValidationAt(1, 0.5));
  CheckpointReport at_50 = CheckpointAt(50);
  at_50.records = 800;
  record.Apply(at_50);
  EXPECT_EQ(record.trial(kRecordedTrial).batches_trained, 50u);
  EXPECT_EQ(record.trial(kRecordedTrial).records_trained, 800u);
  record.Apply(ValidationAt(100, 0.5));
  record.Apply(CheckpointAt(50));  // a late report of an earlier one takes nothing back
  EXPECT_EQ(record.trial(kRecordedTrial).batches_trained, 100u);
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

// A trial's best checkpoint is the kept one validated best (the oldest of equals, as the best
// validation is), not its latest; one that retention deleted is not named; a checkpoint without a
// validation at its batches is never the best.
TEST(ExperimentRecordTest, TheBestCheckpointIsTheKeptOneValidatedBest) {
  ExperimentRecord record = EmptyRecord();
  const TrialRecord& trial = record.trial(kRecordedTrial);
  EXPECT_EQ(record.BestCheckpoint(trial), nullptr);
  record.Apply(CheckpointAt(50));  // no validation at batch 50
  EXPECT_EQ(record.BestCheckpoint(trial), nullptr);
  for (auto [batches, accuracy] : {std::pair{100, 0.5}, {200, 0.9}, {300, 0.7}, {400, 0.9}}) {
    record.Apply(ValidationAt(batches, accuracy));
    record.Apply(CheckpointAt(batches));
  }
  record.Apply(CheckpointAt(450));
  ASSERT_NE(record.BestCheckpoint(trial), nullptr);
  EXPECT_EQ(record.BestCheckpoint(trial)->id, "trial-1-batch-200");
  record.trial(kRecordedTrial).checkpoints.erase(trial.checkpoints.begin() + 2);  // batch 200
  ASSERT_NE(record.BestCheckpoint(trial), nullptr);
  EXPECT_EQ(record.BestCheckpoint(trial)->id, "trial-1-batch-400");
  record.smaller_is_better = true;
  EXPECT_EQ(record.BestCheckpoint(trial)->id, "trial-1-batch-100");
}

// The best trial is the one whose best validation is best (the lowest id of equals; a diverged
// trial's NaN never), and experiment.json names it with its best checkpoint, as it names each
// trial's.
TEST(ExperimentRecordTest, TheBestTrialAndItsCheckpointAreInExperimentJson) {
  ExperimentRecord record = EmptyRecord();
  EXPECT_EQ(record.BestTrial(), nullptr);
  EXPECT_TRUE(YAML::Load(record.ToJson())["best_trial"].IsNull());
  auto validate = [&](uint64_t trial, uint64_t batches, double accuracy, bool checkpoint) {
    MetricsReport report = ValidationAt(batches, accuracy);
    report.trial_id = trial;
    record.Apply(report);
    if (!checkpoint) return;
    CheckpointReport saved = CheckpointAt(batches);
    saved.trial_id = trial;
    saved.id = "trial-" + std::to_string(trial) + "-batch-" + std::to_string(batches);
    record.Apply(saved);
  };
  validate(3, 100, 0.8, true);
  validate(3, 200, 0.6, true);
  validate(1, 100, std::nan(""), true);
  validate(2, 300, 0.8, false);  // as good as trial 3's best, and validated without a checkpoint
  ASSERT_NE(record.BestTrial(), nullptr);
  EXPECT_EQ(record.BestTrial()->id, 2u);
  const YAML::Node json = YAML::Load(record.ToJson());
  EXPECT_EQ(json["best_trial"]["id"].as<int>(), 2);
  EXPECT_EQ(json["best_trial"]["batches"].as<int>(), 300);
  EXPECT_DOUBLE_EQ(json["best_trial"]["searcher_metric"].as<double>(), 0.8);
  EXPECT_TRUE(json["best_trial"]["best_checkpoint"].IsNull());
  validate(3, 300, 0.95, true);
  EXPECT_EQ(record.BestTrial()->id, 3u);
  const YAML::Node after = YAML::Load(record.ToJson());
  EXPECT_EQ(after["best_trial"]["best_checkpoint"].as<std::string>(), "trial-3-batch-300");
  for (const YAML::Node& trial : after["trials"]) {
    if (trial["id"].as<int>() == 3) {
      EXPECT_EQ(trial["best_checkpoint"].as<std::string>(), "trial-3-batch-300");
    } else {
      EXPECT_TRUE(trial["best_checkpoint"].IsNull()) << trial["id"];  // NaN; no checkpoint
    }
  }
}

}  // namespace
}  // namespace cohort
