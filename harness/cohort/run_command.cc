#include "harness/cohort/run_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "harness/cohort/entrypoint.h"
#include "harness/cohort/local_run.h"
#include "runtime/record/run_folder.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/yaml_quoting.h"

namespace cohort {
namespace {

constexpr char kUsage[] =
    "usage: cohort run EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--resume DIR]\n"
    "\n"
    "Trains the experiment on this machine and writes a run folder (default\n"
    "runs/<name>-<timestamp>/): config.yaml, experiment.json, trials/<id>/metrics.jsonl,\n"
    "trials/<id>/log.txt and checkpoints/.\n"
    "\n"
    "  --output DIR        the run folder to create\n"
    "  --set KEY=VALUE     override a config value by its dotted path, e.g.\n"
    "                      --set hyperparameters.learning_rate=0.05\n"
    "                      --set searcher.max_length.batches=2000\n"
    "  --resume DIR        continue the run in DIR from its latest checkpoint (EXPERIMENT.yaml\n"
    "                      may then be left out: the run's own config.yaml is used)\n"
    "  --cpu-slots N       CPU slots this machine offers (default: its core count); more than\n"
    "                      the cores is allowed, for testing\n"
    "\n"
    "Ctrl-C asks the trial to checkpoint and stop (resume it with --resume); a second Ctrl-C\n"
    "kills it. Exit status: 0 completed, 1 error, 2 bad usage, 130 stopped.\n";


struct RunArgs {
  std::string experiment;
  std::string output;
  std::string resume;
  std::vector<std::string> overrides;
  uint32_t cpu_slots = std::max(1u, std::thread::hardware_concurrency());
};

int Usage(absl::string_view problem) {
  std::fprintf(stderr, "cohort run: %.*s\n\n%s", static_cast<int>(problem.size()), problem.data(),
               kUsage);
  return 2;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

std::optional<RunArgs> ParseArgs(const std::vector<std::string>& args, int* exit_code) {
  RunArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      *exit_code = 0;
      return std::nullopt;
    }
    if (arg == "--output" || arg == "--set" || arg == "--resume" || arg == "--cpu-slots") {
      if (i + 1 == args.size()) {
        *exit_code = Usage(absl::StrCat(arg, " needs a value"));
        return std::nullopt;
      }
      const std::string& value = args[++i];
      if (arg == "--output") parsed.output = value;
      if (arg == "--resume") parsed.resume = value;
      if (arg == "--set") parsed.overrides.push_back(value);
      if (arg == "--cpu-slots" && (!absl::SimpleAtoi(value, &parsed.cpu_slots) ||
                                   parsed.cpu_slots == 0)) {
        *exit_code = Usage(absl::StrCat("--cpu-slots needs a number >= 1, not '", value, "'"));
        return std::nullopt;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      *exit_code = Usage(absl::StrCat("unknown option '", arg, "'"));
      return std::nullopt;
    } else if (parsed.experiment.empty()) {
      parsed.experiment = arg;
    } else {
      *exit_code = Usage(absl::StrCat("unexpected argument '", arg, "'"));
      return std::nullopt;
    }
  }
  if (parsed.experiment.empty() && parsed.resume.empty()) {
    *exit_code = Usage("missing EXPERIMENT.yaml");
    return std::nullopt;
  }
  if (!parsed.resume.empty() && !parsed.output.empty()) {
    *exit_code = Usage("--output and --resume do not go together (the run folder is DIR)");
    return std::nullopt;
  }
  return parsed;
}

// Loads the config; a run without reproducibility.experiment_seed gets one drawn now (or the one
// the resumed run already used), recorded in config.yaml so every restart trains the same way.
absl::StatusOr<ExperimentConfig> LoadConfig(const std::string& path,
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

// The run folder's checkpoints/, or <host_path>[/<storage_path>]/<run folder name> when the config
// names shared storage (so experiments sharing it never mix their checkpoints).
std::string CheckpointRoot(const ExperimentConfig& config, const RunFolder& folder) {
  const CheckpointStorageConfig& storage = config.checkpoint_storage;
  if (storage.host_path.empty()) return folder.default_checkpoint_root();
  std::filesystem::path root(storage.host_path);
  if (!storage.storage_path.empty()) root /= storage.storage_path;
  return (root / std::filesystem::path(folder.path()).filename()).string();
}

}  // namespace

int RunRunCommand(const std::vector<std::string>& arguments) {
  int exit_code = 0;
  std::optional<RunArgs> args = ParseArgs(arguments, &exit_code);
  if (!args) return exit_code;

  std::optional<RunFolder> folder;
  std::optional<uint64_t> seed_in_use;
  std::string config_path = args->experiment;
  if (!args->resume.empty()) {
    absl::StatusOr<RunFolder> opened = RunFolder::Open(args->resume);
    if (!opened.ok()) return Fail(opened.status());
    folder = *opened;
    absl::StatusOr<ExperimentConfig> stored = LoadExperimentConfig(folder->config_path());
    if (!stored.ok()) return Fail(stored.status());
    seed_in_use = stored->experiment_seed;
    if (config_path.empty()) config_path = folder->config_path();
  }
  absl::StatusOr<ExperimentConfig> config = LoadConfig(config_path, args->overrides, seed_in_use);
  if (!config.ok()) return Fail(config.status());
  for (const std::string& key : config->ignored_keys) {
    std::fprintf(stderr, "note: %s is not used by cohort run and is ignored\n", key.c_str());
  }
  if (config->searcher.name != "single") {
    return Fail(absl::UnimplementedError(absl::StrCat(
        "searcher.name: '", config->searcher.name,
        "' is a valid searcher, but cohort run trains one trial and runs only 'single' so far")));
  }
  if (config->slots_per_trial > args->cpu_slots) {
    return Fail(absl::FailedPreconditionError(absl::StrCat(
        "resources.slots_per_trial: ", config->slots_per_trial, " slots, but this machine offers ",
        args->cpu_slots, " CPU slots (one per core; --cpu-slots N allows more)")));
  }
  if (const uint64_t slots = config->slots_per_trial; config->global_batch_size % slots != 0) {
    const uint64_t per_slot = config->global_batch_size / slots;
    std::fprintf(stderr,
                 "warning: hyperparameters.global_batch_size %llu is not a multiple of "
                 "resources.slots_per_trial %llu: each slot trains %llu records, so a global "
                 "batch holds %llu\n",
                 static_cast<unsigned long long>(config->global_batch_size),
                 static_cast<unsigned long long>(slots), static_cast<unsigned long long>(per_slot),
                 static_cast<unsigned long long>(per_slot * slots));
  }
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config->entrypoint, config->config_dir);
  if (!plugin.ok()) return Fail(plugin.status());
  if (!folder) {
    absl::StatusOr<RunFolder> created = RunFolder::Create(
        args->output.empty() ? DefaultRunPath("runs", config->name) : args->output);
    if (!created.ok()) return Fail(created.status());
    folder = *created;
  }
  if (absl::Status status = WriteFileAtomically(folder->config_path(), config->effective_yaml);
      !status.ok()) {
    return Fail(status);
  }
  if (absl::Status status = folder->PrepareTrial(kSingleTrialId); !status.ok()) return Fail(status);
  const std::string checkpoint_root = CheckpointRoot(*config, *folder);
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(checkpoint_root);
  if (!storage.ok()) return Fail(storage.status());

  std::fprintf(stderr, "experiment %s: run folder %s\n", config->name.c_str(),
               folder->path().c_str());
  LocalRun run(*std::move(config), *folder, *std::move(plugin), *std::move(storage),
               checkpoint_root);
  if (!args->resume.empty()) {
    if (absl::Status status = run.Rewind(); !status.ok()) return Fail(status);
  }
  return run.Run();
}

}  // namespace cohort
