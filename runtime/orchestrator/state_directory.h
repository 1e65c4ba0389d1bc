// StateDirectory: what an orchestrator keeps under its state directory, and reads back when it
// starts:
//
//   <root>/experiments/<experiment id>/   each experiment's run folder (config.yaml as submitted,
//                                         experiment.json, trials/<trial id>/...)
//   <root>/next_task_id                   the first task id not yet used
//   <root>/next_experiment_id, next_trial_id   the first ids not yet used, kept once an
//                                         experiment is deleted (its folder no longer counts)
//   <root>/orchestrator.lock              held by the orchestrator using it
//   (state_directory_lock.h)
//
// Ids are never reused: a new orchestrator continues after every experiment, trial and task an
// earlier one left (an agent may still run a task of the earlier one), deleted ones included.
//
//   StateDirectory state(options.state_dir);
//   next_experiment_id = state.FirstFreeExperimentId();
//   for (absl::StatusOr<StoredExperiment>& stored : state.ReadExperiments()) { ... }
//
// Thread-safety: not thread-safe; the orchestrator's thread.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_H_
#define COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/client/client_messages.h"
#include "runtime/config/experiment_config.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/run_folder.h"

namespace cohort {

// One experiment's run folder, read back.
struct StoredExperiment {
  uint64_t id = 0;
  RunFolder folder;
  ExperimentConfig config;    // its config.yaml
  ExperimentRecord record;    // its experiment.json
  double submitted_unix = 0;  // when config.yaml was written (0 when unknown)
  double saved_unix = 0;      // when experiment.json was last written (0 when unknown)
};

class StateDirectory {
 public:
  explicit StateDirectory(std::string root) : root_(std::move(root)) {}

  // The run folder of experiment `id`.
  std::string ExperimentPath(uint64_t id) const;

  // The first ids no experiment folder, no trial folder of any experiment, and no earlier task
  // (next_task_id) has taken; 1 in an empty directory.
  uint64_t FirstFreeExperimentId() const;
  uint64_t FirstFreeTrialId() const;
  uint64_t FirstFreeTaskId() const;
  // Keeps `next` as the first free task id.
  absl::Status StoreFirstFreeTaskId(uint64_t next) const;

  // Removes experiment `id`'s run folder: first the first free experiment and trial ids are kept
  // (`next_experiment`, `next_trial`), then the folder is renamed out of the experiments' names
  // (so it is gone from ReadExperiments at once, whatever happens next) and removed. Errors name
  // the path and the system's reason; on one, what was not yet renamed is left as it was.
  absl::Status RemoveExperiment(uint64_t id, uint64_t next_experiment, uint64_t next_trial) const;

  // Removes what deletes left half done (a process stopped between RemoveExperiment's rename and
  // the end of its removal): the renamed folders it names in the result, so an orchestrator can
  // say so. Errors name the folder.
  absl::StatusOr<std::vector<std::string>> FinishInterruptedDeletes() const;

  // Every experiment folder, in id order: read back, or an error naming the experiment, its
  // folder and why it cannot be loaded.
  std::vector<absl::StatusOr<StoredExperiment>> ReadExperiments() const;

 private:
  std::string root_;
};

// How trial and experiment states are written in experiment.json: ACTIVE until they end.
RunState RunStateOf(TrialState state);
RunState RunStateOf(ExperimentState state);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_STATE_DIRECTORY_H_
