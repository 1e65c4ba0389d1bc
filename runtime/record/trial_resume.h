// Bringing a trial's record back to a checkpoint: RewindTrialRecord when the trial restarts from
// its latest checkpoint, ResumeTrialRecord when a stopped or failed run is continued from its
// run folder and storage (`cohort run --resume`, an orchestrator's restart).
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/run_folder.h"

namespace cohort {

// Where a resumed trial starts: its latest whole checkpoint, or the beginning ("" and 0), and the
// reports kept from before it, in order.
struct ResumePoint {
  std::string checkpoint_id;
  uint64_t batches = 0;
  std::vector<MetricsReport> kept_reports;
  // One line per damaged checkpoint of the trial newer than the resume point (storage lists it
  // but it is not whole), naming it, why, and where the trial resumes instead; or, for a trial
  // the record says trained batches of, one line saying it trains them again when no checkpoint
  // of it is kept at all.
  std::vector<std::string> warnings;
};

// Forgets what trial `trial_id` reported after `batches` (it trains those batches again), in
// `record` and in its metrics file at `metrics_path`: the record's latest and best reports are
// again those up to `batches`. Returns the reports kept, in order; an error when the metrics file
// cannot be rewritten (the record is rewound all the same). `reported_batches`: as
// TrimMetricsFile's.
absl::StatusOr<std::vector<MetricsReport>> RewindTrialRecord(const std::string& metrics_path,
                                                             uint64_t trial_id, uint64_t batches,
                                                             ExperimentRecord* record,
                                                             uint64_t* reported_batches = nullptr);

// Replaces the record's trial `trial_id` (keeping its hyperparameters and restarts) with what
// its metrics file at `metrics_path` and `storage` say up to its latest checkpoint. An error when
// storage cannot be listed or the metrics file cannot be rewritten.
absl::StatusOr<ResumePoint> ResumeTrialRecord(const std::string& metrics_path, uint64_t trial_id,
                                              const CheckpointStorage& storage,
                                              ExperimentRecord* record);

// The same for trial `trial_id` of the run folder `folder`, each with its TensorBoard events
// rewritten to match the reports kept. RewindTrialFiles returns the lines to log: a warning for
// each file that could not be rewritten. ResumeTrialFiles reads the shared_fs storage at
// `checkpoint_root`; a TensorBoard file that cannot be rewritten adds a warning to the point's.
std::vector<std::string> RewindTrialFiles(const RunFolder& folder, uint64_t trial_id,
                                          uint64_t batches, ExperimentRecord* record);
absl::StatusOr<ResumePoint> ResumeTrialFiles(const RunFolder& folder, uint64_t trial_id,
                                             const std::string& checkpoint_root,
                                             ExperimentRecord* record);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_TRIAL_RESUME_H_
