// Checkpoint retention, as Determined's checkpoint_storage settings: keep each trial's
// `save_trial_latest` newest checkpoints, its `save_trial_best` best by the searcher metric, and
// the experiment's `save_experiment_best` best across all trials; everything else may go.
//
//   RetentionPolicy policy;   // keep each trial's newest and its best; smaller metric is better
//   std::vector<std::string> doomed = CheckpointsToDelete(records, policy);
//   for (const std::string& id : doomed) storage.Delete(id);
//
// Newest means most batches_trained, then greatest id. Best compares metrics; equal metrics
// rank the lower trial id first, then the older checkpoint (fewest batches_trained, then least
// id), as the record names its best trial and checkpoint, so the checkpoint `describe` and
// `--best` name is the one kept. A checkpoint without a metric (or with NaN) is never "best".
// Pure function: safe from any thread.
#ifndef COHORT_RUNTIME_CHECKPOINT_RETENTION_H_
#define COHORT_RUNTIME_CHECKPOINT_RETENTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cohort {

struct RetentionPolicy {
  uint32_t save_trial_latest = 1, save_trial_best = 1, save_experiment_best = 0;
  bool smaller_is_better = true;
};

struct CheckpointRecord {
  std::string id;
  uint64_t trial_id = 0;
  uint64_t batches_trained = 0;
  std::optional<double> metric;  // the searcher metric validated at that checkpoint, if any
};

// The ids of the checkpoints no rule keeps, each once, ordered by (trial_id, batches_trained, id).
// An id that any rule keeps is never returned, even if it appears in several records.
std::vector<std::string> CheckpointsToDelete(const std::vector<CheckpointRecord>& checkpoints,
                                             const RetentionPolicy& policy);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_RETENTION_H_
