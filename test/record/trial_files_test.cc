// RewindTrialFiles on a real run folder: metrics.jsonl and the TensorBoard events both go back
// to the reports up to the checkpoint, and a metrics file that cannot be rewritten is a warning.
// ResumeTrialFiles says when a trial that trained keeps no checkpoint to go on from.
#include <filesystem>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/file_io.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/run_folder.h"
#include "runtime/record/tensorboard_events.h"
#include "runtime/record/trial_resume.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr uint64_t kTrial = 4;

MetricsReport Training(uint64_t batches) {
  MetricsReport report;
  report.trial_id = kTrial;
  report.batches = batches;
  report.records = batches * 8;
  report.unix_time = 1700000000.0 + static_cast<double>(batches);
  report.metrics = {{"loss", 1.0 / static_cast<double>(batches)}};
  return report;
}

TEST(TrialFilesTest, RewindKeepsMetricsAndTensorBoardUpToTheBatch) {
  TempFolder root;
  absl::StatusOr<RunFolder> folder = RunFolder::Create(root / "run");
  ASSERT_TRUE(folder.ok()) << folder.status();
  ASSERT_TRUE(folder->PrepareTrial(kTrial).ok());
  ExperimentRecord record;
  for (uint64_t batches : {10, 20, 30}) {
    const MetricsReport report = Training(batches);
    ASSERT_TRUE(AppendLine(folder->metrics_path(kTrial), MetricsReportJson(report)).ok());
    ASSERT_TRUE(AppendTensorBoardReport(folder->tensorboard_path(kTrial), report).ok());
    record.Apply(report);
  }

  EXPECT_TRUE(RewindTrialFiles(*folder, kTrial, /*batches=*/20, &record).empty());

  absl::StatusOr<std::string> metrics = ReadWholeFile(folder->metrics_path(kTrial));
  ASSERT_TRUE(metrics.ok());
  std::vector<uint64_t> kept;
  for (absl::string_view line : absl::StrSplit(*metrics, '\n', absl::SkipEmpty())) {
    absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, kTrial);
    ASSERT_TRUE(report.ok()) << report.status();
    kept.push_back(report->batches);
  }
  EXPECT_THAT(kept, ElementsAre(10, 20));
  ASSERT_TRUE(record.trial(kTrial).latest_training.has_value());
  EXPECT_EQ(record.trial(kTrial).latest_training->batches, 20u);
  const std::string expected_events = root / "expected.tfevents";
  ASSERT_TRUE(WriteTensorBoardReports(expected_events, {Training(10), Training(20)}).ok());
  EXPECT_EQ(ReadWholeFile(folder->tensorboard_path(kTrial)).value_or("missing"),
            ReadWholeFile(expected_events).value_or("none"));
}

TEST(TrialFilesTest, AMetricsFileThatCannotBeRewrittenIsAWarning) {
  TempFolder root;
  absl::StatusOr<RunFolder> folder = RunFolder::Create(root / "run");
  ASSERT_TRUE(folder.ok()) << folder.status();
  ExperimentRecord record;
  // A folder where metrics.jsonl should be: it can be neither read nor replaced.
  std::filesystem::create_directories(folder->metrics_path(kTrial));
  const std::vector<std::string> lines = RewindTrialFiles(*folder, kTrial, 20, &record);
  ASSERT_THAT(lines, SizeIs(1));
  EXPECT_THAT(lines[0], HasSubstr("warning: "));
}

TEST(TrialFilesTest, AResumedTrialThatKeepsNoCheckpointIsSaidToTrainAgain) {
  TempFolder root;
  absl::StatusOr<RunFolder> folder = RunFolder::Create(root / "run");
  ASSERT_TRUE(folder.ok()) << folder.status();
  ASSERT_TRUE(folder->PrepareTrial(kTrial).ok());
  const std::string checkpoints = root / "checkpoints";
  std::filesystem::create_directories(checkpoints);
  ExperimentRecord record;
  const MetricsReport report = Training(30);
  ASSERT_TRUE(AppendLine(folder->metrics_path(kTrial), MetricsReportJson(report)).ok());
  record.Apply(report);

  absl::StatusOr<ResumePoint> point = ResumeTrialFiles(*folder, kTrial, checkpoints, &record);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(point->batches, 0u);
  EXPECT_THAT(point->warnings,
              ElementsAre("warning: trial 4 had trained 30 batches but keeps no checkpoint (none "
                          "was written yet, or checkpoint_storage's save_trial_latest and "
                          "save_trial_best keep none); it trains again from batch 0"));
  EXPECT_EQ(record.trial(kTrial).batches_trained, 0u);

  // A trial that trained nothing yet starts without a word.
  point = ResumeTrialFiles(*folder, kTrial, checkpoints, &record);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_THAT(point->warnings, SizeIs(0));

  // `cohort run --resume` hands in a fresh record: what the trial trained is read from its
  // metrics.jsonl, and the warning still comes (a run killed before its first checkpoint).
  for (const uint64_t batches : {20, 40}) {
    ASSERT_TRUE(
        AppendLine(folder->metrics_path(kTrial), MetricsReportJson(Training(batches))).ok());
  }
  ExperimentRecord fresh;
  point = ResumeTrialFiles(*folder, kTrial, checkpoints, &fresh);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_THAT(point->warnings, ElementsAre(HasSubstr("trial 4 had trained 40 batches but keeps "
                                                     "no checkpoint")));
}

}  // namespace
}  // namespace cohort
