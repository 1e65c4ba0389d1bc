// Whether a run folder may go on under a config: what `cohort run --resume` and `cohort launch`
// check before they write anything, so a refusal leaves the run folder as it was.
//
//   absl::StatusOr<StoredRun> stored = OpenStoredRun(dir);
//   absl::StatusOr<ExperimentConfig> config = LoadRunConfig(...);
//   if (absl::Status can = CheckCanContinue(*stored, *config, "--resume"); !can.ok())
//     ...;  // refused: nothing written
//
// Thread-safety: free functions.
#ifndef COHORT_HARNESS_COHORT_RUN_RESUME_CHECKS_H_
#define COHORT_HARNESS_COHORT_RUN_RESUME_CHECKS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "harness/cohort/run/run_setup.h"
#include "runtime/config/experiment_config.h"

namespace cohort {

// Whether `config` may continue `stored`. FAILED_PRECONDITION, naming what stands in the way:
// - the run's record (experiment.json) cannot be read (the resume would write its own over it);
// - the run folder's config.yaml no longer holds the settings the record says the run trained
//   with (it was edited since: the checkpoints hold what the recorded settings made), naming the
//   hyperparameters that differ where the record shows them;
// - `config` names another entrypoint (plugin) than the run's, as written;
// - under a searcher other than single, another search space (a hyperparameter's type, bounds,
//   base, values, or the grid's count), naming each hyperparameter that differs;
// - `config` would train otherwise than the stored settings, naming each setting that differs;
//   another slot count alone may go on where CheckSlotChange allows it, for every trial's own
//   global_batch_size when it is searched;
// - it would look for the checkpoints elsewhere (checkpoint_storage's host_path or storage_path);
// - none of a trial's recorded checkpoints is in the checkpoint root (it would train the trial
//   again from its start);
// - its searcher.max_length ends a trial before the checkpoint it would resume from;
// - its random searcher's max_trials is lower than a recorded trial's id (that trial would be
//   left out of the record).
// - under adaptive_asha, its searcher settings differ from the run's (its promotions, which the
//   resumed searcher decides again from the record's searcher events, were made under them), or
//   its record predates searcher events.
// A run that trained nothing (it failed or was stopped before its first batch: no
// experiment.json, or no trial with a batch or a checkpoint) holds nothing to contradict: any
// config may start there.
// `how` names what the user asked for ("--resume"), and starts every message.
absl::Status CheckCanContinue(const StoredRun& stored, const ExperimentConfig& config,
                              absl::string_view how);

// Where a run that trained goes on at another slot count (CheckCanContinue allowed it): "the run
// in runs/mlp trained at 2 slots; it goes on at 4, each slot's share of a batch 8 records instead
// of 16 (the same 32 a batch)"; nullopt at the same count, or for a run that trained nothing.
std::optional<std::string> SlotChangeNote(const StoredRun& stored, const ExperimentConfig& config);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_RESUME_CHECKS_H_
