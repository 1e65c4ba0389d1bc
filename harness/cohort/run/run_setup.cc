#include "harness/cohort/run/run_setup.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "harness/cohort/process/entrypoint.h"
#include "harness/cohort/process/plugin_load_probe.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/checkpoint/root_claim.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/config/yaml_quoting.h"
#include "runtime/plugin/plugin_library.h"

namespace cohort {
namespace {

// A plugin with an optimizer_step of its own is refused the keys that act on the built-in
// optimizer alone (CheckOwnOptimizerKeys). One without trains with the built-in optimizer, which
// the hyperparameters configure: what its worker would refuse (an unknown optimizer, a learning
// rate
// <= 0) is refused now, before a run folder exists. Only where every trial sees the same values:
// the single searcher, or no built-in optimizer hyperparameter searched (the other trials' values
// are their workers' to check). `must_open`: a plugin that does not open (another ABI major, no
// entry point, not a plugin) is refused as its worker would refuse it; else it is the workers' to
// name (`cohort submit`'s, whose agents' hosts may open what this one cannot).
absl::Status CheckBuiltInOptimizer(const ExperimentConfig& config, const std::string& plugin_path,
                                   bool must_open) {
  if (absl::Status loads = CheckPluginLoadsInChild(plugin_path); !loads.ok()) {
    if (!must_open) return absl::OkStatus();
    return absl::Status(loads.code(), absl::StrCat("entrypoint: ", loads.message()));
  }
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(plugin_path);
  if (!plugin.ok()) {
    if (!must_open) return absl::OkStatus();
    return absl::Status(plugin.status().code(),
                        absl::StrCat("entrypoint: ", plugin.status().message()));
  }
  if ((*plugin)->has_optimizer()) {
    return CheckOwnOptimizerKeys(config.optimizations, (*plugin)->name());
  }
  if (config.searcher.name != "single") {
    for (const OptimizerOptions::Kind kind :
         {OptimizerOptions::Kind::kSgd, OptimizerOptions::Kind::kAdam,
          OptimizerOptions::Kind::kAdamW}) {
      for (const std::string& name : OptimizerHyperparameterNames(kind)) {
        if (config.hyperparameter_spaces.count(name) != 0) return absl::OkStatus();
      }
    }
  }
  return OptimizerOptionsFromHyperparameters(config.hyperparameters).status();
}

// checkpoint_storage.host_path as the run will use it: a folder, or one that can be made in the
// nearest folder above it that exists (tried with a folder made and removed at once, so nothing
// is left: only trying tells, since root passes every permission check). Unset: the run folder.
absl::Status CheckHostPath(const ExperimentConfig& config) {
  const std::string& host_path = config.checkpoint_storage.host_path;
  if (host_path.empty()) return absl::OkStatus();
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path at = fs::path(AbsolutePath(host_path)).lexically_normal();
  while (!fs::exists(at, error) && at.has_parent_path() && at != at.parent_path()) {
    at = at.parent_path();
  }
  const auto unusable = [&](absl::string_view why) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint_storage.host_path: ", host_path,
                                                      " cannot hold the checkpoints: ", why));
  };
  if (!fs::is_directory(at, error)) return unusable(absl::StrCat(at.string(), " is not a folder"));
  const fs::path probe = at / absl::StrCat(".cohort-probe-", ::getpid());
  if (!fs::create_directory(probe, error)) {
    return unusable(
        absl::StrCat("no folder can be made in ", at.string(), " (", error.message(), ")"));
  }
  fs::remove(probe, error);
  return absl::OkStatus();
}

}  // namespace

namespace {

// What the orchestrator checks beyond the file's own rules (Orchestrator::CheckExperiment), the
// plugin the entrypoint names and the built-in optimizer's hyperparameters, and the host_path.
absl::Status CheckRun(const ExperimentConfig& config) {
  absl::Status checked = Orchestrator::CheckExperiment(config);
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config.entrypoint, config.config_dir);
  if (checked.ok()) checked = plugin.status();
  if (checked.ok()) checked = CheckBuiltInOptimizer(config, *plugin, /*must_open=*/true);
  if (checked.ok()) checked = CheckHostPath(config);
  return checked;
}

}  // namespace

absl::StatusOr<ExperimentConfig> LoadRunConfig(const std::string& path,
                                               std::vector<std::string> overrides,
                                               std::optional<uint64_t> seed_in_use) {
  const size_t user_overrides = overrides.size();
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(path, overrides);
  if (!config.ok()) return config;
  // The name (which may come from the file name) and the seed go into config.yaml explicitly.
  overrides.push_back(absl::StrCat("name=", QuotedYamlScalar(config->name)));
  // A plugin named by a relative path is found from the config file's folder: config.yaml, which
  // a resume reads in the run folder, names it by its absolute path.
  if (NamesPluginByRelativePath(config->entrypoint)) {
    if (absl::StatusOr<std::string> plugin =
            ResolveEntrypoint(config->entrypoint, config->config_dir);
        plugin.ok()) {
      overrides.push_back(absl::StrCat("entrypoint=", QuotedYamlScalar(*plugin)));
    }
  }
  // So is a relative checkpoint_storage.host_path, taken from where the run starts (a resume
  // elsewhere would look for the checkpoints in another folder).
  if (const std::string& host_path = config->checkpoint_storage.host_path;
      !host_path.empty() && std::filesystem::path(host_path).is_relative()) {
    overrides.push_back(
        absl::StrCat("checkpoint_storage.host_path=", QuotedYamlScalar(AbsolutePath(host_path))));
  }
  if (!config->experiment_seed) {
    const uint64_t seed = seed_in_use ? *seed_in_use : std::random_device{}() % 1000000000;
    overrides.push_back(absl::StrCat("reproducibility.experiment_seed=", seed));
  }
  absl::StatusOr<ExperimentConfig> loaded = LoadExperimentConfig(path, overrides);
  if (!loaded.ok()) return loaded;
  absl::Status checked =
      CheckAsLoaderTells(path, *loaded, std::move(overrides), user_overrides, CheckRun);
  if (!checked.ok()) return checked;
  return loaded;
}

absl::Status CheckAsLoaderTells(const std::string& path, const ExperimentConfig& loaded,
                                std::vector<std::string> overrides, size_t user_overrides,
                                const std::function<absl::Status(const ExperimentConfig&)>& check) {
  absl::Status checked = check(loaded);
  if (checked.ok()) return checked;
  bool file_alone_good = false;
  if (user_overrides > 0) {
    overrides.erase(overrides.begin(), overrides.begin() + static_cast<ptrdiff_t>(user_overrides));
    absl::StatusOr<ExperimentConfig> alone = LoadExperimentConfig(path, overrides);
    file_alone_good = alone.ok() && check(*alone).ok();
  }
  return absl::Status(
      checked.code(),
      absl::StrCat(path, file_alone_good ? " as --set changes it: " : ": ", checked.message()));
}

absl::Status CheckSubmission(const ExperimentConfig& config) {
  if (absl::Status checked = Orchestrator::CheckExperiment(config); !checked.ok()) return checked;
  if (absl::Status shared = Orchestrator::CheckSharedHostPath(config); !shared.ok()) return shared;
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config.entrypoint, config.config_dir);
  if (!plugin.ok()) return plugin.status();
  return CheckBuiltInOptimizer(config, *plugin, /*must_open=*/false);
}

absl::StatusOr<StoredRun> OpenStoredRun(const std::string& path) {
  absl::StatusOr<RunFolder> folder = RunFolder::Open(path);
  if (!folder.ok()) return folder.status();
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(folder->config_path());
  if (!config.ok()) return config.status();
  return StoredRun{*std::move(folder), *std::move(config)};
}

namespace {

// <host_path>[/<storage_path>]/<the name of the run folder at `run_path`> ("runs/hp/" is hp too).
std::string SharedCheckpointRoot(const CheckpointStorageConfig& storage,
                                 const std::string& run_path) {
  std::filesystem::path root(storage.host_path);
  if (!storage.storage_path.empty()) root /= storage.storage_path;
  std::filesystem::path run = std::filesystem::path(run_path).lexically_normal();
  if (!run.has_filename()) run = run.parent_path();
  return (root / run.filename()).string();
}

}  // namespace

std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder) {
  if (config.checkpoint_storage.host_path.empty()) return folder.default_checkpoint_root();
  return SharedCheckpointRoot(config.checkpoint_storage, folder.path());
}

absl::StatusOr<PreparedRun> PrepareSubmission(ExperimentConfig config,
                                              std::optional<RunFolder> folder,
                                              const std::string& path) {
  // LoadRunConfig checked the experiment and found its plugin; this takes the plugin's path.
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config.entrypoint, config.config_dir);
  if (!plugin.ok()) return plugin.status();
  const bool resume = folder.has_value();
  // Shared storage holds the checkpoints of runs of any folder, under their folders' names.
  const bool shared = !config.checkpoint_storage.host_path.empty();
  // A folder that holds a run already is refused as such (RunFolder::Create says so), before its
  // checkpoints in shared storage could be taken for an earlier run's.
  if (!folder && RunFolder::Open(path).ok()) {
    return RunFolder::Create(path).status();
  }
  if (!folder && shared) {
    if (absl::Status free = CheckCheckpointRootFree(
            AbsolutePath(SharedCheckpointRoot(config.checkpoint_storage, path)),
            AbsolutePath(path));
        !free.ok()) {
      return free;
    }
  }
  if (!folder) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(path);
    if (!created.ok()) return created.status();
    folder = *created;
  }
  StateDirectoryLock::Wording wording;
  wording.what = absl::StrCat("the run folder ", folder->path());
  wording.holder = "another cohort run or cohort launch";
  wording.remedy = "let it end, or stop it, before continuing the run there";
  absl::StatusOr<StateDirectoryLock> lock =
      StateDirectoryLock::Acquire(folder->path() + "/local", wording);
  if (!lock.ok()) return lock.status();
  const std::string checkpoint_root = AbsolutePath(CheckpointRoot(config, *folder));
  if (shared) {
    if (absl::Status claimed =
            ClaimCheckpointRoot(checkpoint_root, AbsolutePath(folder->path()), resume);
        !claimed.ok()) {
      return claimed;
    }
  }
  if (absl::Status status = WriteFileAtomically(folder->config_path(), config.effective_yaml);
      !status.ok()) {
    return status;
  }
  config.entrypoint = AbsolutePath(*plugin);
  return PreparedRun{LocalSubmission{std::move(config), *folder, checkpoint_root, resume},
                     *std::move(lock)};
}

}  // namespace cohort
