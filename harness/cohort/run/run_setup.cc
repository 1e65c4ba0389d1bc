#include "harness/cohort/run/run_setup.h"

#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/process/entrypoint.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/config/yaml_quoting.h"

namespace cohort {

absl::StatusOr<ExperimentConfig> LoadRunConfig(const std::string& path,
                                               std::vector<std::string> overrides,
                                               std::optional<uint64_t> seed_in_use) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(path, overrides);
  if (!config.ok()) return config;
  // The name (which may come from the file name) and the seed go into config.yaml explicitly.
  overrides.push_back(absl::StrCat("name=", QuotedYamlScalar(config->name)));
  if (!config->experiment_seed) {
    const uint64_t seed = seed_in_use ? *seed_in_use : std::random_device{}() % 1000000000;
    overrides.push_back(absl::StrCat("reproducibility.experiment_seed=", seed));
  }
  return LoadExperimentConfig(path, overrides);
}

absl::StatusOr<StoredRun> OpenStoredRun(const std::string& path) {
  absl::StatusOr<RunFolder> folder = RunFolder::Open(path);
  if (!folder.ok()) return folder.status();
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(folder->config_path());
  if (!config.ok()) return config.status();
  return StoredRun{*std::move(folder), *std::move(config)};
}

absl::Status CheckCanContinue(const StoredRun& stored, const ExperimentConfig& config,
                              absl::string_view how) {
  // Another slot count alone may go on from the same checkpoints (CheckSlotChange says when).
  ExperimentConfig at_stored_slots = config;
  at_stored_slots.slots_per_trial = stored.config.slots_per_trial;
  if (!TrainingChanges(stored.config, at_stored_slots).empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(how, ": the run in ", stored.folder.path(),
                     " was trained with other settings, and its checkpoints hold what they made (",
                     absl::StrJoin(TrainingChanges(stored.config, config), "; "),
                     "); resume with the run's own settings, or start a new run (--output)"));
  }
  if (absl::Status slots = CheckSlotChange(stored.config, config); !slots.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(how, ": the run in ", stored.folder.path(),
                                                      " cannot go on as asked: ", slots.message(),
                                                      "; or start a new run (--output)"));
  }
  if (config.searcher.name == "adaptive_asha") {
    return absl::UnimplementedError(absl::StrCat(
        how, ": the run in ", stored.folder.path(),
        " cannot continue: the single, grid and random searchers' experiments can, but "
        "adaptive_asha's promotions are not kept in the run folder; start a new run (--output)"));
  }
  return absl::OkStatus();
}

std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder) {
  const CheckpointStorageConfig& storage = config.checkpoint_storage;
  if (storage.host_path.empty()) return folder.default_checkpoint_root();
  std::filesystem::path root(storage.host_path);
  if (!storage.storage_path.empty()) root /= storage.storage_path;
  return (root / std::filesystem::path(folder.path()).filename()).string();
}

absl::StatusOr<LocalSubmission> PrepareSubmission(ExperimentConfig config,
                                                  std::optional<RunFolder> folder,
                                                  const std::string& path) {
  if (absl::Status checked = Orchestrator::CheckExperiment(config); !checked.ok()) return checked;
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config.entrypoint, config.config_dir);
  if (!plugin.ok()) return plugin.status();
  const bool resume = folder.has_value();
  if (!folder) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(path);
    if (!created.ok()) return created.status();
    folder = *created;
  }
  if (absl::Status status = WriteFileAtomically(folder->config_path(), config.effective_yaml);
      !status.ok()) {
    return status;
  }
  const std::string checkpoint_root = AbsolutePath(CheckpointRoot(config, *folder));
  config.entrypoint = AbsolutePath(*plugin);
  return LocalSubmission{std::move(config), *folder, checkpoint_root, resume};
}

}  // namespace cohort
