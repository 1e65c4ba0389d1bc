#include "runtime/record/record_retention.h"

#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/retention.h"

namespace cohort {

std::vector<std::string> ApplyRecordRetention(const CheckpointStorageConfig& policy_config,
                                              bool smaller_is_better, bool trials_may_resume,
                                              CheckpointStorage& storage,
                                              ExperimentRecord* record) {
  RetentionPolicy policy;
  policy.save_trial_latest = policy_config.save_trial_latest;
  policy.save_trial_best = policy_config.save_trial_best;
  policy.save_experiment_best = policy_config.save_experiment_best;
  policy.smaller_is_better = smaller_is_better;
  if (trials_may_resume && policy.save_trial_latest == 0) policy.save_trial_latest = 1;
  std::vector<CheckpointRecord> checkpoints;
  for (const TrialRecord& trial : record->trials) {
    for (const CheckpointEntry& c : trial.checkpoints) {
      checkpoints.push_back({c.id, trial.id, c.batches, c.metric});
    }
  }
  std::vector<std::string> warnings;
  for (const std::string& id : CheckpointsToDelete(checkpoints, policy)) {
    absl::Status deleted = storage.Delete(id);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      warnings.push_back(absl::StrCat("warning: ", deleted.message()));
      continue;
    }
    for (TrialRecord& trial : record->trials) {
      std::erase_if(trial.checkpoints, [&](const CheckpointEntry& c) { return c.id == id; });
    }
  }
  return warnings;
}

}  // namespace cohort
