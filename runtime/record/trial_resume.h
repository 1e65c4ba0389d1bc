// ResumeTrialRecord: brings a trial's record back to its latest whole checkpoint when a stopped
// or failed run is continued (`cohort run --resume`).
//
// The trial's metrics.jsonl keeps the reports up to that checkpoint (the rest is trained again
// and reported anew); the record is rebuilt from them, and its checkpoint list from the trial's
// checkpoints in storage up to that one, each with the searcher metric validated at its batch.
//
//   absl::StatusOr<ResumePoint> point = ResumeTrialRecord(folder.metrics_path(1), 1, *storage,
//                                                          &record);
//   if (point.ok() && !point->checkpoint_id.empty()) start.resume = point->checkpoint_id;
//
// Thread-safety: mutates `record` and the metrics file; one caller at a time.
#ifndef COHORT_RUNTIME_RECORD_TRIAL_RESUME_H_
#define COHORT_RUNTIME_RECORD_TRIAL_RESUME_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/record/experiment_record.h"

namespace cohort {

// Where a resumed trial starts: its latest whole checkpoint, or the beginning ("" and 0).
struct ResumePoint {
  std::string checkpoint_id;
  uint64_t batches = 0;
};

// Replaces the record's trial `trial_id` (keeping its hyperparameters and restarts) with what
// its metrics file at `metrics_path` and `storage` say up to its latest checkpoint. An error when
// storage cannot be listed or the metrics file cannot be rewritten.
absl::StatusOr<ResumePoint> ResumeTrialRecord(const std::string& metrics_path, uint64_t trial_id,
                                              const CheckpointStorage& storage,
                                              ExperimentRecord* record);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_TRIAL_RESUME_H_
