// ReadRecordedExperiment: what a run folder's experiment.json says of the experiment's state and
// its trials, for an orchestrator that takes over a state directory after a restart.
//
//   absl::StatusOr<RecordedExperiment> recorded =
//       ReadRecordedExperiment(folder.experiment_json_path());
//   if (recorded.ok() && recorded->state == RunState::kActive) { /* continue it */ }
//
// Thread-safety: reads a file; no shared state.
#ifndef COHORT_RUNTIME_RECORD_RECORDED_EXPERIMENT_H_
#define COHORT_RUNTIME_RECORD_RECORDED_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/record/experiment_record.h"

namespace cohort {

struct RecordedExperiment {
  RunState state = RunState::kActive;
  std::vector<uint64_t> trial_ids;  // in the order the trials were created
};

// NOT_FOUND when the file is missing; INVALID_ARGUMENT naming the path when it is not an
// experiment.json (ExperimentRecord::ToJson) or names an unknown state.
absl::StatusOr<RecordedExperiment> ReadRecordedExperiment(const std::string& path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_RECORDED_EXPERIMENT_H_
