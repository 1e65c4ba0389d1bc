#include "harness/cohort/run_command.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "harness/cohort/entrypoint.h"
#include "harness/cohort/experiment_record.h"
#include "harness/cohort/progress_display.h"
#include "harness/cohort/run_folder.h"
#include "harness/cohort/worker_process.h"
#include "runtime/checkpoint/retention.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/rendezvous_service.h"
#include "runtime/control/worker_hub.h"

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

constexpr uint64_t kTrialId = 1;  // the single searcher runs one trial

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

// `text` as a double-quoted YAML scalar, so an override keeps it a string whatever it holds.
std::string YamlQuoted(absl::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// Loads the config; a run without reproducibility.experiment_seed gets one drawn now (or the one
// the resumed run already used), recorded in config.yaml so every restart trains the same way.
absl::StatusOr<ExperimentConfig> LoadConfig(const std::string& path,
                                            std::vector<std::string> overrides,
                                            std::optional<uint64_t> seed_in_use) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(path, overrides);
  if (!config.ok()) return config;
  // The name (which may come from the file name) and the seed go into config.yaml explicitly.
  overrides.push_back(absl::StrCat("name=", YamlQuoted(config->name)));
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

// The embedded orchestrator for one experiment.
class LocalRun {
 public:
  LocalRun(ExperimentConfig config, RunFolder folder, std::string plugin,
           std::unique_ptr<CheckpointStorage> storage, std::string checkpoint_root)
      : config_(std::move(config)),
        folder_(std::move(folder)),
        plugin_(std::move(plugin)),
        storage_(std::move(storage)),
        checkpoint_root_(std::move(checkpoint_root)),
        record_(ExperimentRecord::For(config_)),
        display_(stderr) {}

  // Brings the record back to the trial's latest checkpoint (metrics after it are dropped:
  // the trial trains those batches again).
  absl::Status Rewind();
  int Run();

 private:
  void OnMessage(WorkerHub& hub, const std::string& peer, const WorkerMessage& message);
  void ApplyRetention(bool trial_active);
  void Save();
  void ShowLogTail();

  ExperimentConfig config_;
  RunFolder folder_;
  std::string plugin_;
  std::unique_ptr<CheckpointStorage> storage_;
  std::string checkpoint_root_;
  ExperimentRecord record_;
  ProgressDisplay display_;
  RendezvousService rendezvous_;
  std::vector<TrialFinished> finished_;  // one per rank that finished this attempt
  size_t hellos_ = 0;
  std::string resume_from_;
};

absl::Status LocalRun::Rewind() {
  TrialRecord& trial = record_.trial(kTrialId);
  trial.checkpoints.clear();
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(*storage_, kTrialId);
  const uint64_t kept_batches = latest.ok() ? latest->batches_trained : 0;
  resume_from_ = latest.ok() ? latest->id : "";
  if (!latest.ok() && !absl::IsNotFound(latest.status())) return latest.status();

  // Replay the metrics up to the checkpoint; drop the rest from metrics.jsonl.
  const ExperimentRecord fresh = ExperimentRecord::For(config_);
  const uint32_t restarts = trial.restarts;
  record_ = fresh;
  record_.trial(kTrialId).restarts = restarts;
  std::map<uint64_t, MetricsReport> validations;
  std::string kept;
  const std::string metrics_path = folder_.metrics_path(kTrialId);
  if (std::filesystem::exists(metrics_path)) {
    absl::StatusOr<std::string> text = ReadFile(metrics_path);
    if (!text.ok()) return text.status();
    for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
      absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, kTrialId);
      if (!report.ok() || report->batches > kept_batches) continue;
      record_.Apply(*report);
      if (report->kind == ReportKind::kValidation) validations[report->batches] = *report;
      absl::StrAppend(&kept, line, "\n");
    }
    if (absl::Status status = WriteFileAtomically(metrics_path, kept); !status.ok()) return status;
  }
  absl::StatusOr<std::vector<CheckpointInfo>> stored = storage_->List();
  if (!stored.ok()) return stored.status();
  for (const CheckpointInfo& info : *stored) {
    if (info.trial_id != kTrialId || info.batches_trained > kept_batches) continue;
    CheckpointEntry entry{info.id, info.batches_trained, std::nullopt};
    if (auto v = validations.find(info.batches_trained); v != validations.end()) {
      entry.metric = record_.SearcherMetricOf(v->second);
    }
    record_.trial(kTrialId).checkpoints.push_back(entry);
  }
  record_.trial(kTrialId).batches_trained = kept_batches;
  return absl::OkStatus();
}

void LocalRun::Save() {
  if (absl::Status status = WriteFileAtomically(folder_.experiment_json_path(), record_.ToJson());
      !status.ok()) {
    display_.Message(absl::StrCat("warning: ", status.message()));
  }
}

void LocalRun::ApplyRetention(bool trial_active) {
  RetentionPolicy policy;
  policy.save_trial_latest = config_.checkpoint_storage.save_trial_latest;
  policy.save_trial_best = config_.checkpoint_storage.save_trial_best;
  policy.save_experiment_best = config_.checkpoint_storage.save_experiment_best;
  policy.smaller_is_better = config_.searcher.smaller_is_better;
  // A trial that may still restart keeps its latest checkpoint whatever the policy says.
  if (trial_active && policy.save_trial_latest == 0) policy.save_trial_latest = 1;
  std::vector<CheckpointRecord> records;
  for (const TrialRecord& trial : record_.trials) {
    for (const CheckpointEntry& c : trial.checkpoints) {
      records.push_back({c.id, trial.id, c.batches, c.metric});
    }
  }
  for (const std::string& id : CheckpointsToDelete(records, policy)) {
    absl::Status deleted = storage_->Delete(id);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      display_.Message(absl::StrCat("warning: ", deleted.message()));
      continue;
    }
    for (TrialRecord& trial : record_.trials) {
      std::erase_if(trial.checkpoints, [&](const CheckpointEntry& c) { return c.id == id; });
    }
  }
}

void LocalRun::OnMessage(WorkerHub& hub, const std::string& peer, const WorkerMessage& message) {
  if (rendezvous_.Handle(hub, peer, message)) return;
  TrialRecord& trial = record_.trial(kTrialId);
  if (const auto* hello = std::get_if<WorkerHello>(&message)) {
    ++hellos_;
    trial.total_batches = hello->total_batches;
    trial.state = RunState::kActive;
    Save();
  } else if (const auto* metrics = std::get_if<MetricsReport>(&message)) {
    if (absl::Status status = AppendLine(folder_.metrics_path(kTrialId), MetricsReportJson(*metrics));
        !status.ok()) {
      display_.Message(absl::StrCat("warning: ", status.message()));
    }
    record_.Apply(*metrics);
    display_.Metrics(*metrics);
    Save();
  } else if (const auto* progress = std::get_if<ProgressReport>(&message)) {
    trial.batches_trained = progress->batches;
    display_.Update(*progress);
  } else if (const auto* checkpoint = std::get_if<CheckpointReport>(&message)) {
    record_.Apply(*checkpoint);
    ApplyRetention(/*trial_active=*/true);
    Save();
  } else if (const auto* finished = std::get_if<TrialFinished>(&message)) {
    finished_.push_back(*finished);
  }
}

void LocalRun::ShowLogTail() {
  absl::StatusOr<std::string> log = ReadFile(folder_.log_path(kTrialId));
  if (!log.ok()) return;
  std::vector<absl::string_view> lines = absl::StrSplit(*log, '\n', absl::SkipEmpty());
  const size_t first = lines.size() > 10 ? lines.size() - 10 : 0;
  std::fprintf(stderr, "last lines of %s:\n", folder_.log_path(kTrialId).c_str());
  for (size_t i = first; i < lines.size(); ++i) {
    std::fprintf(stderr, "  | %.*s\n", static_cast<int>(lines[i].size()), lines[i].data());
  }
}

int LocalRun::Run() {
  absl::StatusOr<std::string> executable = SelfExecutable();
  if (!executable.ok()) return Fail(executable.status());
  TrialRecord* trial = &record_.trial(kTrialId);
  int interrupts = 0;
  const uint32_t slots = config_.slots_per_trial;
  for (uint32_t attempt = 0;; ++attempt) {
    absl::StatusOr<std::unique_ptr<WorkerHub>> hub =
        WorkerHub::Bind("tcp://127.0.0.1:*", [this](absl::string_view why) {
          display_.Message(absl::StrCat("warning: dropped a malformed worker message: ", why));
        });
    if (!hub.ok()) return Fail(hub.status());
    std::vector<WorkerLaunch> launches;
    for (uint32_t rank = 0; rank < slots; ++rank) {
      WorkerLaunch launch{*executable,
                          {"worker", "--run-dir", folder_.path(), "--plugin", plugin_,
                           "--trial-id", absl::StrCat(kTrialId), "--rank", absl::StrCat(rank),
                           "--size", absl::StrCat(slots), "--attempt", absl::StrCat(attempt),
                           "--endpoint", (*hub)->endpoint(), "--checkpoint-root",
                           checkpoint_root_},
                          folder_.log_path(kTrialId)};
      if (!resume_from_.empty()) launch.args.insert(launch.args.end(), {"--resume", resume_from_});
      launches.push_back(std::move(launch));
    }
    if (!resume_from_.empty()) {
      display_.Message(absl::StrCat("trial ", kTrialId, ": resuming from checkpoint ", resume_from_));
    }
    finished_.clear();
    hellos_ = 0;
    rendezvous_.Clear();
    record_.state = RunState::kActive;
    Save();
    WorkerHub& hub_ref = **hub;
    absl::StatusOr<WorkerOutcome> outcome = SuperviseWorkers(
        launches, hub_ref,
        [this, &hub_ref](const std::string& peer, const WorkerMessage& m) {
          OnMessage(hub_ref, peer, m);
        },
        [] {});
    display_.Finish();
    if (!outcome.ok()) return Fail(outcome.status());
    interrupts += outcome->interrupts;
    trial = &record_.trial(kTrialId);

    // The trial ended well only if every rank says so and none died.
    auto all_finished = [&](TrialExit exit) {
      if (finished_.size() != slots) return false;
      for (const TrialFinished& f : finished_) {
        if (f.exit != exit) return false;
      }
      for (const ChildExit& e : outcome->exits) {
        if (e.signaled) return false;
      }
      return true;
    };
    if (all_finished(TrialExit::kCompleted)) {
      trial->state = RunState::kCompleted;
      break;
    }
    if (all_finished(TrialExit::kStopped)) {
      trial->state = RunState::kStopped;
      break;
    }
    // The first failure a worker reported, else the first worker that died.
    trial->error.clear();
    for (const TrialFinished& f : finished_) {
      if (f.exit == TrialExit::kFailed && !f.message.empty()) {
        trial->error = f.message;
        break;
      }
    }
    bool crashed = false;
    for (size_t rank = 0; rank < outcome->exits.size() && trial->error.empty(); ++rank) {
      const ChildExit& e = outcome->exits[rank];
      if (e.signaled || e.code != 0) {
        trial->error = absl::StrCat("the worker", slots > 1 ? absl::StrCat(" of rank ", rank) : "",
                                    " ended without finishing: ", e.Describe());
        crashed = true;
      }
    }
    if (trial->error.empty()) trial->error = "the workers ended without finishing";
    display_.Message(absl::StrCat("trial ", kTrialId, " failed: ", trial->error));
    // An error the workers reported before all of them said hello (a bad hyperparameter, a
    // plugin that does not load) would only happen again; a crash, or an error while training,
    // earns a restart.
    const bool may_restart = (crashed || hellos_ == slots) && interrupts == 0 &&
                             trial->restarts < config_.max_restarts;
    if (!may_restart) {
      trial->state = RunState::kError;
      ShowLogTail();
      break;
    }
    ++trial->restarts;
    const uint32_t restarts = trial->restarts;
    if (absl::Status status = Rewind(); !status.ok()) return Fail(status);
    trial = &record_.trial(kTrialId);
    trial->restarts = restarts;
    display_.Message(absl::StrFormat("trial %d: restart %d of %d", kTrialId, restarts,
                                     config_.max_restarts));
  }

  record_.state = trial->state;
  if (trial->state == RunState::kCompleted) ApplyRetention(/*trial_active=*/false);
  Save();
  std::printf("experiment %s: %s after %llu of %llu batches\n", record_.name.c_str(),
              RunStateName(record_.state), static_cast<unsigned long long>(trial->batches_trained),
              static_cast<unsigned long long>(trial->total_batches));
  if (trial->best_validation) {
    std::string metrics;
    for (const NamedValue& m : trial->best_validation->metrics) {
      absl::StrAppendFormat(&metrics, " %s=%.6g", m.name, m.value);
    }
    std::printf("  best validation (after %llu batches):%s\n",
                static_cast<unsigned long long>(trial->best_validation->batches), metrics.c_str());
  }
  for (const CheckpointEntry& c : trial->checkpoints) {
    std::printf("  checkpoint %s\n", c.id.c_str());
  }
  std::printf("  run folder: %s\n", folder_.path().c_str());
  if (trial->state == RunState::kStopped) {
    std::printf("  continue with: cohort run --resume %s\n", folder_.path().c_str());
    return 130;
  }
  return trial->state == RunState::kCompleted ? 0 : 1;
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
  if (absl::Status status = folder->PrepareTrial(kTrialId); !status.ok()) return Fail(status);
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
