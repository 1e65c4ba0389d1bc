// Checkpoint retention over an experiment's record: deletes from storage the checkpoints that
// checkpoint_storage's save_trial_latest / save_trial_best / save_experiment_best do not keep, and
// forgets them in the record.
//
//   std::vector<std::string> warnings =
//       ApplyRecordRetention(config.checkpoint_storage, config.searcher.smaller_is_better,
//                            /*trials_may_resume=*/true, storage, &record);
//
// Thread-safety: mutates `record` and storage; one caller at a time.
#ifndef COHORT_RUNTIME_RECORD_RECORD_RETENTION_H_
#define COHORT_RUNTIME_RECORD_RECORD_RETENTION_H_

#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/record/experiment_record.h"

namespace cohort {

// `trials_may_resume`: some trial may still resume from its latest checkpoint, which is then kept
// whatever save_trial_latest says. Returns a warning per checkpoint that could not be deleted
// (it stays in the record); a checkpoint already gone counts as deleted.
std::vector<std::string> ApplyRecordRetention(const CheckpointStorageConfig& policy_config,
                                              bool smaller_is_better, bool trials_may_resume,
                                              CheckpointStorage& storage, ExperimentRecord* record);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_RECORD_RETENTION_H_
