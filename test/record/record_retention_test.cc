// ApplyRecordRetention: what it keeps in storage is what the record names best. With equal
// searcher metrics the record's best trial is the lower id and its best checkpoint the older one,
// so retention keeps exactly that checkpoint; a tie once kept another, and the record then named a
// worse checkpoint of the best trial as the experiment's best.
#include "runtime/record/record_retention.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

std::string CheckpointName(uint64_t trial, uint64_t batches) {
  return "trial-" + std::to_string(trial) + "-batch-" + std::to_string(batches);
}

// Records a validation of `loss` at `batches` and a checkpoint there, in the record and storage.
void ValidateAndSave(uint64_t trial, uint64_t batches, double loss, CheckpointStorage& storage,
                     ExperimentRecord& record) {
  MetricsReport validation;
  validation.trial_id = trial;
  validation.kind = ReportKind::kValidation;
  validation.batches = batches;
  validation.metrics = {{"loss", loss}};
  record.Apply(validation);
  CheckpointInfo info;
  info.id = CheckpointName(trial, batches);
  info.trial_id = trial;
  info.batches_trained = batches;
  ASSERT_TRUE(storage.Write(info, {{"parameters", info.id}}).ok());
  CheckpointReport saved;
  saved.trial_id = trial;
  saved.id = info.id;
  saved.batches = batches;
  record.Apply(saved);
}

std::vector<std::string> StoredIds(const CheckpointStorage& storage) {
  const absl::StatusOr<std::vector<CheckpointInfo>> listed = storage.List();
  EXPECT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> ids;
  if (listed.ok()) {
    for (const CheckpointInfo& info : *listed) ids.push_back(info.id);
  }
  return ids;
}

class RecordRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    record_.searcher_metric = "loss";
    record_.smaller_is_better = true;
    auto opened = OpenSharedFsStorage(folder_.path());
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
  }

  TempFolder folder_;
  ExperimentRecord record_;
  std::unique_ptr<CheckpointStorage> storage_;
};

TEST_F(RecordRetentionTest, TheExperimentsBestCheckpointIsTheOneKeptAmongEqualMetrics) {
  // Both trials reach loss 0.2 at their first checkpoint, then do worse.
  for (const uint64_t trial : {1, 2}) {
    ValidateAndSave(trial, 100, 0.2, *storage_, record_);
    ValidateAndSave(trial, 200, 0.5, *storage_, record_);
  }
  CheckpointStorageConfig policy;
  policy.save_trial_latest = 1;
  policy.save_trial_best = 0;
  policy.save_experiment_best = 1;
  EXPECT_TRUE(ApplyRecordRetention(policy, /*smaller_is_better=*/true, /*trials_may_resume=*/true,
                                   *storage_, &record_)
                  .empty());

  EXPECT_EQ(
      StoredIds(*storage_),
      (std::vector<std::string>{"trial-1-batch-100", "trial-1-batch-200", "trial-2-batch-200"}));
  const TrialRecord* best = record_.BestTrial();
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->id, 1u);
  const CheckpointEntry* checkpoint = record_.BestCheckpoint(*best);
  ASSERT_NE(checkpoint, nullptr);
  EXPECT_EQ(checkpoint->id, "trial-1-batch-100");
  EXPECT_EQ(checkpoint->metric, 0.2);
}

TEST_F(RecordRetentionTest, ATrialsBestCheckpointIsTheOlderOfEqualsAndStaysKept) {
  ValidateAndSave(1, 100, 0.3, *storage_, record_);
  ValidateAndSave(1, 200, 0.2, *storage_, record_);
  ValidateAndSave(1, 300, 0.2, *storage_, record_);
  ValidateAndSave(1, 400, 0.6, *storage_, record_);
  EXPECT_TRUE(ApplyRecordRetention(CheckpointStorageConfig{}, /*smaller_is_better=*/true,
                                   /*trials_may_resume=*/true, *storage_, &record_)
                  .empty());

  EXPECT_EQ(StoredIds(*storage_),
            (std::vector<std::string>{"trial-1-batch-200", "trial-1-batch-400"}));
  const TrialRecord& trial = record_.trial(1);
  ASSERT_TRUE(trial.best_validation.has_value());
  EXPECT_EQ(trial.best_validation->batches, 200u);
  const CheckpointEntry* checkpoint = record_.BestCheckpoint(trial);
  ASSERT_NE(checkpoint, nullptr);
  EXPECT_EQ(checkpoint->id, "trial-1-batch-200");
}

}  // namespace
}  // namespace cohort
