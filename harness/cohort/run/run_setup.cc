#include "harness/cohort/run/run_setup.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/process/entrypoint.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/config/yaml_quoting.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/record/experiment_record_reader.h"
#include "yaml-cpp/yaml.h"

namespace cohort {
namespace {

// A plugin without an optimizer_step of its own trains with the built-in optimizer, which the
// hyperparameters configure: what its worker would refuse (an unknown optimizer, a learning rate
// <= 0) is refused now, before a run folder exists. Only where every trial sees the same values:
// the single searcher, or no built-in optimizer hyperparameter searched (the other trials' values
// are their workers' to check). A plugin that does not open is its worker's to name.
absl::Status CheckBuiltInOptimizer(const ExperimentConfig& config, const std::string& plugin_path) {
  if (config.searcher.name != "single") {
    for (const OptimizerOptions::Kind kind :
         {OptimizerOptions::Kind::kSgd, OptimizerOptions::Kind::kAdam,
          OptimizerOptions::Kind::kAdamW}) {
      for (const std::string& name : OptimizerHyperparameterNames(kind)) {
        if (config.hyperparameter_spaces.count(name) != 0) return absl::OkStatus();
      }
    }
  }
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(plugin_path);
  if (!plugin.ok() || (*plugin)->has_optimizer()) return absl::OkStatus();
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

absl::StatusOr<ExperimentConfig> LoadRunConfig(const std::string& path,
                                               std::vector<std::string> overrides,
                                               std::optional<uint64_t> seed_in_use) {
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
  // What the orchestrator checks beyond the file's own rules, and the plugin it names, told with
  // the file as those are.
  absl::Status checked = Orchestrator::CheckExperiment(*loaded);
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(loaded->entrypoint, loaded->config_dir);
  if (checked.ok()) checked = plugin.status();
  if (checked.ok()) checked = CheckBuiltInOptimizer(*loaded, *plugin);
  if (checked.ok()) checked = CheckHostPath(*loaded);
  if (!checked.ok()) {
    return absl::Status(checked.code(), absl::StrCat(path, ": ", checked.message()));
  }
  return loaded;
}

absl::StatusOr<StoredRun> OpenStoredRun(const std::string& path) {
  absl::StatusOr<RunFolder> folder = RunFolder::Open(path);
  if (!folder.ok()) return folder.status();
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(folder->config_path());
  if (!config.ok()) return config.status();
  return StoredRun{*std::move(folder), *std::move(config)};
}

namespace {

// A resume goes on from the run's checkpoints where they are: one that looked elsewhere would find
// none and train every trial again from its start, beside the checkpoints it left.
absl::Status CheckSameCheckpointRoot(const StoredRun& stored, const ExperimentConfig& config,
                                     absl::string_view how) {
  const std::string kept = AbsolutePath(CheckpointRoot(stored.config, stored.folder));
  const std::string asked = AbsolutePath(CheckpointRoot(config, stored.folder));
  if (kept == asked) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      how, ": checkpoint_storage: the run in ", stored.folder.path(), " keeps its checkpoints in ",
      kept, ", and a resume goes on from them, but this config puts them in ", asked,
      "; resume with the run's host_path and storage_path, or start a new run (--output)"));
}

// The global batch size a recorded trial trained with: its own hyperparameters' (a JSON object,
// which YAML reads), else the experiment's.
std::optional<uint64_t> RecordedGlobalBatchSize(const ExperimentRecord& record,
                                                const TrialRecord& trial) {
  const std::string& json =
      trial.hyperparameters_json.empty() ? record.hyperparameters_json : trial.hyperparameters_json;
  try {
    const YAML::Node size = YAML::Load(json)["global_batch_size"];
    if (size.IsScalar()) return size.as<uint64_t>();
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

// A resume trains each trial to its length under `config`. A trial whose latest checkpoint is past
// that length has trained more than asked: it would resume beyond its end and have no result
// there, so a resume can keep or lengthen searcher.max_length but not end a trial before its
// checkpoints. What experiment.json does not say (no record yet) is not checked.
absl::Status CheckLengthCoversCheckpoints(const StoredRun& stored, const ExperimentConfig& config,
                                          absl::string_view how) {
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (!record.ok()) return absl::OkStatus();
  absl::StatusOr<SearcherLength> length = SearcherMaxLength(config);
  if (!length.ok()) return length.status();
  for (const TrialRecord& trial : record->trials) {
    if (trial.checkpoints.empty()) continue;
    const CheckpointEntry& latest = trial.checkpoints.back();
    uint64_t target = length->value;
    if (length->in_records) {
      const std::optional<uint64_t> batch = RecordedGlobalBatchSize(*record, trial);
      if (!batch || *batch == 0) continue;
      target = TrialBatches(length->value, /*in_records=*/true, *batch);
    }
    if (latest.batches <= target) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": searcher.max_length ends trial ", trial.id, " after ", target,
        " batches, but the run in ", stored.folder.path(), " already holds its checkpoint ",
        latest.id, " at batch ", latest.batches,
        "; a resume can keep or lengthen max_length, not end a trial before what it has trained "
        "(keep it at ",
        latest.batches, " batches or more), or start a new run (--output)"));
  }
  return absl::OkStatus();
}

// A resume goes on from each trial's recorded checkpoints: a trial none of whose checkpoints is
// in the checkpoint root (deleted, moved, or looked for elsewhere) would train again from its
// start, silently. A damaged or partly missing one is the workers' to pass over.
absl::Status CheckRecordedCheckpointsThere(const StoredRun& stored, const ExperimentConfig& config,
                                           absl::string_view how) {
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (!record.ok()) return absl::OkStatus();
  const std::string root = AbsolutePath(CheckpointRoot(config, stored.folder));
  for (const TrialRecord& trial : record->trials) {
    if (trial.checkpoints.empty()) continue;
    const bool any = std::any_of(
        trial.checkpoints.begin(), trial.checkpoints.end(), [&](const CheckpointEntry& entry) {
          std::error_code error;
          return std::filesystem::is_directory(std::filesystem::path(root) / entry.id, error);
        });
    if (any) continue;
    const CheckpointEntry& latest = trial.checkpoints.back();
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": the run in ", stored.folder.path(), " recorded ", trial.checkpoints.size(),
        " checkpoint(s) of trial ", trial.id, " (the latest ", latest.id, ", at batch ",
        latest.batches, "), but none of them is in ", root,
        ": a resume would train the trial again from its start; put them back there, or start a "
        "new run (--output)"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Whether the run in `stored` trained anything: a batch or a checkpoint of any trial.
bool TrainedAnything(const StoredRun& stored) {
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (!record.ok()) return !absl::IsNotFound(record.status());  // unreadable: take it as trained
  for (const TrialRecord& trial : record->trials) {
    if (trial.batches_trained > 0 || !trial.checkpoints.empty()) return true;
  }
  return false;
}

}  // namespace

absl::Status CheckCanContinue(const StoredRun& stored, const ExperimentConfig& config,
                              absl::string_view how) {
  // A record that cannot be read would be written over by the resume's own: the trials'
  // metrics, checkpoints and states lost.
  if (absl::StatusOr<ExperimentRecord> record =
          ReadExperimentRecord(stored.folder.experiment_json_path());
      !record.ok() && !absl::IsNotFound(record.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        how, ": the run in ", stored.folder.path(), " has a record that cannot be read (",
        record.status().message(),
        "), which a resume would write over: put it back, or start a new run (--output)"));
  }
  if (!TrainedAnything(stored)) return absl::OkStatus();
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
  if (absl::Status same_root = CheckSameCheckpointRoot(stored, config, how); !same_root.ok()) {
    return same_root;
  }
  if (absl::Status there = CheckRecordedCheckpointsThere(stored, config, how); !there.ok()) {
    return there;
  }
  if (config.searcher.name == "adaptive_asha") {
    return absl::UnimplementedError(absl::StrCat(
        how, ": the run in ", stored.folder.path(),
        " cannot continue: the single, grid and random searchers' experiments can, but "
        "adaptive_asha's promotions are not kept in the run folder; start a new run (--output)"));
  }
  return CheckLengthCoversCheckpoints(stored, config, how);
}

std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder) {
  const CheckpointStorageConfig& storage = config.checkpoint_storage;
  if (storage.host_path.empty()) return folder.default_checkpoint_root();
  std::filesystem::path root(storage.host_path);
  if (!storage.storage_path.empty()) root /= storage.storage_path;
  return (root / std::filesystem::path(folder.path()).filename()).string();
}

absl::StatusOr<PreparedRun> PrepareSubmission(ExperimentConfig config,
                                              std::optional<RunFolder> folder,
                                              const std::string& path) {
  // LoadRunConfig checked the experiment and found its plugin; this takes the plugin's path.
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config.entrypoint, config.config_dir);
  if (!plugin.ok()) return plugin.status();
  const bool resume = folder.has_value();
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
  if (absl::Status status = WriteFileAtomically(folder->config_path(), config.effective_yaml);
      !status.ok()) {
    return status;
  }
  const std::string checkpoint_root = AbsolutePath(CheckpointRoot(config, *folder));
  config.entrypoint = AbsolutePath(*plugin);
  return PreparedRun{LocalSubmission{std::move(config), *folder, checkpoint_root, resume},
                     *std::move(lock)};
}

}  // namespace cohort
