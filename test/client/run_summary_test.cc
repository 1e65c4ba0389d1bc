// The summary `cohort run` prints when its experiment has ended: each trial's best validation and
// kept checkpoints, the best and the latest named as such; a search's best trial first, with the
// checkpoint to use.
#include "harness/cohort/run/run_summary.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Summary(const ExperimentRecord& record) {
  char* bytes = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&bytes, &size);
  PrintRunSummary(record, "runs/r9", out);
  std::fclose(out);
  std::string text(bytes, size);
  std::free(bytes);
  return text;
}

void Validate(ExperimentRecord& record, uint64_t trial, uint64_t batches, double accuracy,
              bool checkpoint) {
  record.Apply(MetricsReport{.trial_id = trial,
                             .kind = ReportKind::kValidation,
                             .batches = batches,
                             .metrics = {{"accuracy", accuracy}}});
  if (!checkpoint) return;
  record.Apply(
      CheckpointReport{.trial_id = trial,
                       .id = "trial-" + std::to_string(trial) + "-batch-" + std::to_string(batches),
                       .batches = batches});
}

ExperimentRecord Record() {
  ExperimentRecord record;
  record.name = "mlp";
  record.state = RunState::kCompleted;
  record.searcher_metric = "accuracy";
  record.smaller_is_better = false;
  return record;
}

TEST(RunSummaryTest, NamesATrialsBestAndLatestCheckpoints) {
  ExperimentRecord record = Record();
  Validate(record, 1, 1000, 0.93, true);
  Validate(record, 1, 2000, 0.92, true);
  record.trial(1).batches_trained = record.trial(1).total_batches = 2000;
  EXPECT_EQ(Summary(record),
            "experiment mlp: COMPLETED after 2000 of 2000 batches\n"
            "  best validation (after 1000 batches): accuracy=0.93\n"
            "  checkpoint trial-1-batch-1000 (best)\n"
            "  checkpoint trial-1-batch-2000 (latest)\n"
            "  run folder: runs/r9\n");
  record.trial(1).checkpoints.erase(record.trial(1).checkpoints.begin());
  EXPECT_THAT(Summary(record), HasSubstr("  checkpoint trial-1-batch-2000 (best, latest)\n"));
}

TEST(RunSummaryTest, NamesASearchsBestTrialAndItsBestCheckpointFirst) {
  ExperimentRecord record = Record();
  Validate(record, 1, 1000, 0.81, true);
  Validate(record, 2, 1000, 0.88, true);
  Validate(record, 2, 2000, 0.87, true);
  const std::string text = Summary(record);
  EXPECT_THAT(text, HasSubstr("experiment mlp: COMPLETED, 2 trials\n"
                              "  best trial 2: accuracy 0.88 after 1000 batches, checkpoint "
                              "trial-2-batch-1000\n"
                              "  trial 1 "));
  EXPECT_THAT(text, HasSubstr("    checkpoint trial-2-batch-1000 (best)\n"
                              "    checkpoint trial-2-batch-2000 (latest)\n"));

  Validate(record, 3, 500, 0.9, false);  // the best validation, its checkpoint not kept
  EXPECT_THAT(Summary(record),
              HasSubstr("  best trial 3: accuracy 0.9 after 500 batches (no checkpoint of it "
                        "kept)\n"));
}

TEST(RunSummaryTest, ASearchWithoutAValidationNamesNoBestTrial) {
  ExperimentRecord record = Record();
  record.trial(1);
  record.trial(2);
  EXPECT_THAT(Summary(record), Not(HasSubstr("best")));
}

}  // namespace
}  // namespace cohort
