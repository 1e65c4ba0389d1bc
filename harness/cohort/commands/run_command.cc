#include "harness/cohort/commands/run_command.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/process/this_process.h"
#include "harness/cohort/run/embedded_run.h"
#include "harness/cohort/run/resume_checks.h"
#include "harness/cohort/run/run_setup.h"
#include "harness/cohort/run/run_summary.h"
#include "runtime/agent/gpu_slots.h"
#include "runtime/agent/task_table.h"
#include "runtime/config/experiment_config.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

constexpr char kRunUsage[] =
    "usage: cohort run EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--resume DIR]\n"
    "                  [--cpu-slots N | --gpus]\n"
    "\n"
    "Trains the experiment on this machine, every trial its searcher asks for, and writes a\n"
    "run folder (default runs/<name>-<timestamp>/): config.yaml, experiment.json,\n"
    "trials/<id>/metrics.jsonl, trials/<id>/log.txt and checkpoints/. It runs an orchestrator\n"
    "and an agent in this process, as `cohort orchestrator` and `cohort agent` do on a cluster.\n"
    "\n"
    "  --output DIR        the run folder to create\n"
    "  --set KEY=VALUE     override a config value by its dotted path, e.g.\n"
    "                      --set hyperparameters.learning_rate=0.05\n"
    "                      --set searcher.max_length.batches=2000\n"
    "  --resume DIR        continue the run in DIR, each trial from its latest checkpoint\n"
    "                      (EXPERIMENT.yaml may then be left out: the run's own config.yaml is\n"
    "                      used); under every searcher, an adaptive_asha search keeping its\n"
    "                      promotions\n"
    "  --cpu-slots N       CPU slots this machine offers (default: its core count); more than\n"
    "                      the cores is allowed, for testing\n"
    "  --gpus              offer this machine's NVIDIA GPUs instead, one slot each: every\n"
    "                      worker gets one GPU (a plugin that registers its tensors on the\n"
    "                      trial's device trains there, with NCCL between slots)\n"
    "\n"
    "Ctrl-C (or SIGTERM, or SIGHUP unless run under nohup) asks the trials to checkpoint and stop\n"
    "(resume them with --resume); a second one kills them. Exit status: 0 completed, 1 error,\n"
    "2 bad usage, 130 stopped.\n";

struct RunArgs {
  std::string experiment;
  std::string output;
  std::string resume;
  std::vector<std::string> overrides;
  uint32_t cpu_slots = std::max(1u, std::thread::hardware_concurrency());
  bool cpu_slots_given = false;
  bool gpus = false;
};

int RunUsage(absl::string_view problem) { return UsageError("cohort run", problem, kRunUsage); }

std::optional<RunArgs> ParseArgs(const std::vector<std::string>& args, int* exit_code) {
  RunArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kRunUsage, stdout);
      *exit_code = 0;
      return std::nullopt;
    }
    if (arg == "--gpus") {
      parsed.gpus = true;
      continue;
    }
    if (arg == "--output" || arg == "--set" || arg == "--resume" || arg == "--cpu-slots") {
      if (i + 1 == args.size()) {
        *exit_code = RunUsage(absl::StrCat(arg, " needs a value"));
        return std::nullopt;
      }
      const std::string& value = args[++i];
      if (arg == "--output") parsed.output = value;
      if (arg == "--resume") parsed.resume = value;
      if (arg == "--set") parsed.overrides.push_back(value);
      if (arg == "--cpu-slots" &&
          (!absl::SimpleAtoi(value, &parsed.cpu_slots) || parsed.cpu_slots == 0)) {
        *exit_code = RunUsage(absl::StrCat("--cpu-slots needs a number >= 1, not '", value, "'"));
        return std::nullopt;
      }
      if (arg == "--cpu-slots") parsed.cpu_slots_given = true;
    } else if (!arg.empty() && arg[0] == '-') {
      *exit_code = RunUsage(absl::StrCat("unknown option '", arg, "'"));
      return std::nullopt;
    } else if (parsed.experiment.empty()) {
      parsed.experiment = arg;
    } else {
      *exit_code = RunUsage(absl::StrCat("unexpected argument '", arg, "'"));
      return std::nullopt;
    }
  }
  if (parsed.gpus && parsed.cpu_slots_given) {
    *exit_code = RunUsage("--gpus and --cpu-slots are exclusive: the slots are GPUs or CPU cores");
    return std::nullopt;
  }
  if (parsed.experiment.empty() && parsed.resume.empty()) {
    *exit_code = RunUsage("missing EXPERIMENT.yaml");
    return std::nullopt;
  }
  if (!parsed.resume.empty() && !parsed.output.empty()) {
    *exit_code = RunUsage("--output and --resume do not go together (the run folder is DIR)");
    return std::nullopt;
  }
  return parsed;
}

// The record of the run in `stored` when, resumed under `config` (which CheckCanContinue
// allowed), it has nothing left to train: the experiment completed, and so did every trial of it,
// the single searcher's at the very length asked, and `config` asks no more of the searcher (the
// same max_length and max_trials). Its summary is then all a resume has to give, and its folder
// stays as it is, whatever else `config` changes (it would change nothing the run does). A trial
// that failed trains again in a resume, and a longer searcher.max_length or more trials go on:
// those go the whole way.
std::optional<ExperimentRecord> CompletedAsAsked(const StoredRun& stored,
                                                 const ExperimentConfig& config) {
  const SearcherConfig& was = stored.config.searcher;
  if (DescribeLength(config.searcher.max_length) != DescribeLength(was.max_length) ||
      config.searcher.max_trials != was.max_trials) {
    return std::nullopt;
  }
  absl::StatusOr<ExperimentRecord> record =
      ReadExperimentRecord(stored.folder.experiment_json_path());
  if (!record.ok() || record->state != RunState::kCompleted || record->trials.empty()) {
    return std::nullopt;
  }
  const absl::StatusOr<uint64_t> target = MaxLengthInBatches(config);
  if (!target.ok()) return std::nullopt;
  for (const TrialRecord& trial : record->trials) {
    if (trial.state != RunState::kCompleted) return std::nullopt;
    if (config.searcher.name == "single" &&
        (trial.batches_trained != *target || trial.total_batches != *target)) {
      return std::nullopt;
    }
  }
  return *std::move(record);
}

}  // namespace

int RunRunCommand(const std::vector<std::string>& arguments) {
  int exit_code = 0;
  std::optional<RunArgs> args = ParseArgs(arguments, &exit_code);
  if (!args) return exit_code;

  std::optional<StoredRun> stored;
  std::string config_path = args->experiment;
  if (!args->resume.empty()) {
    absl::StatusOr<StoredRun> opened = OpenStoredRun(args->resume);
    if (!opened.ok()) return CommandError(opened.status());
    stored = *std::move(opened);
    if (config_path.empty()) config_path = stored->folder.config_path();
  }
  absl::StatusOr<ExperimentConfig> config = LoadRunConfig(
      config_path, args->overrides, stored ? stored->config.experiment_seed : std::nullopt);
  if (!config.ok()) return CommandError(config.status());
  std::optional<std::string> slot_change;  // said once nothing else refuses the run
  if (stored) {
    if (absl::Status can = CheckCanContinue(*stored, *config, "--resume"); !can.ok()) {
      return CommandError(can);
    }
    if (const std::optional<ExperimentRecord> record = CompletedAsAsked(*stored, *config)) {
      const std::string& searcher = config->searcher.name;
      const std::string longer =
          absl::StrCat("a longer ", MaxLengthKey(config->searcher), ", given with --set, trains ",
                       searcher == "single" ? "it" : "its trials", " on");
      std::fprintf(stderr, "experiment %s: the run in %s has completed: nothing to resume (%s)%s\n",
                   config->name.c_str(), stored->folder.path().c_str(),
                   searcher == "adaptive_asha"
                       ? "its promotions are decided: another search is a new run, --output"
                       : longer.c_str(),
                   config->effective_yaml == stored->config.effective_yaml
                       ? ""
                       : "; its config.yaml is left as it was, the settings asked changing "
                         "nothing it has to do");
      PrintRunSummary(*record, stored->folder.path(), stdout);
      return 0;
    }
    slot_change = SlotChangeNote(*stored, *config);
  }
  absl::StatusOr<std::vector<AgentSlot>> visible =
      args->gpus ? VisibleGpuSlots(CudaVisibleDevices()) : CpuSlots(args->cpu_slots);
  if (!visible.ok()) {
    return CommandError(
        absl::InvalidArgumentError(absl::StrCat("--gpus: ", visible.status().message())));
  }
  const std::vector<AgentSlot>& slots = *visible;
  if (args->gpus && slots.empty()) {
    return CommandError(absl::FailedPreconditionError(
        DetectGpuSlots().empty()
            ? absl::StrCat("--gpus: this machine shows no NVIDIA GPU (", kNvidiaGpusFolder,
                           " lists none: no GPU, or no NVIDIA driver)")
            : absl::StrCat("--gpus: CUDA_VISIBLE_DEVICES=", CudaVisibleDevices().value_or(""),
                           " names none of this machine's GPUs: unset it, or name some")));
  }
  if (config->slots_per_trial > slots.size()) {
    const char* plural = slots.size() == 1 ? "" : "s";
    const std::string offered =
        args->gpus ? absl::StrCat("this machine offers ", slots.size(), " GPU slot", plural,
                                  " (one per GPU)")
        : args->cpu_slots_given
            ? absl::StrCat("this run offers ", slots.size(), " CPU slot", plural, " (--cpu-slots ",
                           slots.size(), ")")
            : absl::StrCat("this machine offers ", slots.size(), " CPU slot", plural,
                           " (one per core; --cpu-slots N allows more)");
    return CommandError(absl::FailedPreconditionError(
        absl::StrCat(config_path, ": resources.slots_per_trial: ", config->slots_per_trial,
                     " slots, but ", offered)));
  }
  absl::StatusOr<std::string> executable = SelfExecutable();
  if (!executable.ok()) return CommandError(executable.status());
  const std::string path =
      args->output.empty() ? DefaultRunPath("runs", config->name) : args->output;
  absl::StatusOr<PreparedRun> prepared = PrepareSubmission(
      *std::move(config), stored ? std::optional<RunFolder>(stored->folder) : std::nullopt, path);
  if (!prepared.ok()) return CommandError(prepared.status());
  LocalSubmission& submission = prepared->submission;
  std::fprintf(stderr, "experiment %s: run folder %s\n", submission.config.name.c_str(),
               submission.folder.path().c_str());
  if (slot_change) std::fprintf(stderr, "%s\n", slot_change->c_str());
  EmbeddedRunOptions options;
  options.slots = slots;
  options.executable = *executable;
  return RunEmbedded(std::move(submission), options);
}

}  // namespace cohort
