// What `cohort run` and `cohort launch` do alike before training: load the config as the run
// folder records it, refuse a resume with other settings, and place the checkpoints.
//
//   absl::StatusOr<ExperimentConfig> config = LoadRunConfig(path, overrides, stored_seed);
//   if (absl::Status can = CheckCanContinue(*stored, *config, "--resume"); !can.ok())
//     ...;  // refused before anything is written
//   const std::string root = CheckpointRoot(*config, folder);
//
// Thread-safety: free functions.
#ifndef COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_
#define COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/config/experiment_config.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/state_directory_lock.h"
#include "runtime/record/run_folder.h"

namespace cohort {

// Loads the config with `overrides`; a run without reproducibility.experiment_seed gets one drawn
// now (or `seed_in_use`, the one the resumed run already used), and the name and the seed go into
// its effective YAML explicitly, so every restart trains the same way; so does the absolute path of
// a plugin the file names by a relative path (the run folder's config.yaml is read from
// elsewhere), and of a relative checkpoint_storage.host_path (from the current folder). What the
// orchestrator checks at submission (Orchestrator::CheckExperiment), the plugin the entrypoint
// names, and, for a plugin that steps with the built-in optimizer, the hyperparameters that
// configure it (where every trial sees the same) are checked too, their errors starting with `path`
// as the loader's do.
absl::StatusOr<ExperimentConfig> LoadRunConfig(const std::string& path,
                                               std::vector<std::string> overrides,
                                               std::optional<uint64_t> seed_in_use);

// A run folder to continue and the config it was trained with.
struct StoredRun {
  RunFolder folder;
  ExperimentConfig config;
};

// The run in `path`: NOT_FOUND when `path` holds none (no config.yaml), else the errors of reading
// its config.
absl::StatusOr<StoredRun> OpenStoredRun(const std::string& path);

// Whether `config` may continue `stored` (refused before anything is written, so the run folder
// stays as it was): FAILED_PRECONDITION naming the settings that differ when it would train
// otherwise (the checkpoints hold what the stored settings made), when it would look for the
// checkpoints elsewhere (checkpoint_storage's host_path or storage_path changed), or when its
// searcher.max_length ends a trial before the checkpoint it would resume from, or when none of a
// trial's recorded checkpoints is in the checkpoint root (it would train again from its start);
// UNIMPLEMENTED for adaptive_asha, whose promotions the run folder does not keep. A run that
// trained nothing (it failed or was stopped before its first batch: no experiment.json, or no
// trial with a batch or a checkpoint) holds nothing to contradict: any config may start there.
// `how` names what the user asked for ("--resume").
absl::Status CheckCanContinue(const StoredRun& stored, const ExperimentConfig& config,
                              absl::string_view how);

// The run folder's checkpoints/, or <host_path>[/<storage_path>]/<run folder name> when the config
// names shared storage (so experiments sharing it never mix their checkpoints).
std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder);

// A submission for RunEmbedded, and the lock that keeps every other `cohort run` and `cohort
// launch` out of its run folder while it trains (on <run>/local, the embedded orchestrator's
// state directory): two at once would train the same trials into the same records and
// checkpoints. It is released when this ends, or with the process however it ends.
struct PreparedRun {
  LocalSubmission submission;
  StateDirectoryLock lock;
};

// The submission of `config` (from LoadRunConfig, which checked it) for RunEmbedded: resolves its
// plugin (an error changes nothing), then uses `folder` (a run being continued) or
// creates one at `path`, locks it (FAILED_PRECONDITION, before anything is written, when another
// run holds it), writes its config.yaml, and makes the plugin and checkpoint paths absolute (the
// workers run in their task folders).
absl::StatusOr<PreparedRun> PrepareSubmission(ExperimentConfig config,
                                              std::optional<RunFolder> folder,
                                              const std::string& path);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_
