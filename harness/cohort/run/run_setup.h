// What `cohort run` and `cohort launch` do alike before training: load the config as the run
// folder records it, place the checkpoints, and lock and write the run folder
// (resume_checks.h says whether a stored run may go on first).
//
//   absl::StatusOr<ExperimentConfig> config = LoadRunConfig(path, overrides, stored_seed);
//   const std::string root = CheckpointRoot(*config, folder);
//
// Thread-safety: free functions.
#ifndef COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_
#define COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_

#include <cstdint>
#include <functional>
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

// Runs `check` on `loaded`, the config at `path` loaded with `overrides` (the first
// `user_overrides` of them the user's --set), and tells its error as the loader tells its own:
// "<path>: ...", or "<path> as --set changes it: ..." where the file without the user's --set
// passes the check. OK when `check` passes.
absl::Status CheckAsLoaderTells(const std::string& path, const ExperimentConfig& loaded,
                                std::vector<std::string> overrides, size_t user_overrides,
                                const std::function<absl::Status(const ExperimentConfig&)>& check);

// What `cohort submit` checks before it sends a config, as LoadRunConfig does for a run, so its
// errors name the file as a run's do: what the orchestrator refuses whatever its agents
// (Orchestrator::CheckExperiment), a relative checkpoint_storage.host_path, the plugin the
// entrypoint names, and for one that steps with the built-in optimizer the hyperparameters that
// configure it, where every trial sees the same (the orchestrator checks the rest, and whether
// the host_path can be written is its machine's to check).
absl::Status CheckSubmission(const ExperimentConfig& config);

// A run folder to continue and the config it was trained with.
struct StoredRun {
  RunFolder folder;
  ExperimentConfig config;
};

// The run in `path`: NOT_FOUND when `path` holds none (no config.yaml), else the errors of reading
// its config.
absl::StatusOr<StoredRun> OpenStoredRun(const std::string& path);

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
