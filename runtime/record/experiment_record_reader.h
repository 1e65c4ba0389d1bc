// ReadExperimentRecord: a run folder's experiment.json read back into the ExperimentRecord that
// wrote it (ExperimentRecord::ToJson), for an orchestrator taking over a state directory after a
// restart: it continues the experiments still ACTIVE and shows the others as they ended.
//
//   absl::StatusOr<ExperimentRecord> record = ReadExperimentRecord(folder.experiment_json_path());
//   if (record.ok() && record->state == RunState::kActive) { /* continue it */ }
//
// ReadExperimentRecord(path) of a file holding record.ToJson() gives a record whose ToJson() is
// the same text.
//
// Thread-safety: reads a file; no shared state.
#ifndef COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_READER_H_
#define COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/record/experiment_record.h"

namespace cohort {

// NOT_FOUND when the file is missing; INVALID_ARGUMENT naming the path and the field when it is
// not an experiment record.
absl::StatusOr<ExperimentRecord> ReadExperimentRecord(const std::string& path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_EXPERIMENT_RECORD_READER_H_
