// What `cohort run` and `cohort launch` do alike before training: load the config as the run
// folder records it, refuse a resume with other settings, and place the checkpoints.
//
//   absl::StatusOr<ExperimentConfig> config = LoadRunConfig(path, overrides, stored_seed);
//   if (absl::Status same = CheckSameTraining(*stored, *config, folder, "--resume"); !same.ok())
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
#include "runtime/record/run_folder.h"

namespace cohort {

// Loads the config with `overrides`; a run without reproducibility.experiment_seed gets one drawn
// now (or `seed_in_use`, the one the resumed run already used), and the name and the seed go into
// its effective YAML explicitly, so every restart trains the same way.
absl::StatusOr<ExperimentConfig> LoadRunConfig(const std::string& path,
                                               std::vector<std::string> overrides,
                                               std::optional<uint64_t> seed_in_use);

// FAILED_PRECONDITION naming the settings that differ when `config` would train otherwise than
// `stored`, the config of the run in `folder` (whose checkpoints hold what it made); `how` names
// what the user asked for ("--resume").
absl::Status CheckSameTraining(const ExperimentConfig& stored, const ExperimentConfig& config,
                               const RunFolder& folder, absl::string_view how);

// The run folder's checkpoints/, or <host_path>[/<storage_path>]/<run folder name> when the config
// names shared storage (so experiments sharing it never mix their checkpoints).
std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder);

// The submission of `config` for RunEmbedded: checks the experiment as the orchestrator will and
// resolves its plugin (an error changes nothing), then uses `folder` (a run being continued) or
// creates one at `path`, writes its config.yaml, and makes the plugin and checkpoint paths
// absolute (the workers run in their task folders).
absl::StatusOr<LocalSubmission> PrepareSubmission(ExperimentConfig config,
                                                  std::optional<RunFolder> folder,
                                                  const std::string& path);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_RUN_SETUP_H_
