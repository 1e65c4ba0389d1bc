#include "harness/cohort/worker_command.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/worker_link.h"
#include "runtime/optim/optimizer.h"
#include "runtime/optim/optimizer_options.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/trial/trial_runner.h"

namespace cohort {
namespace {

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void OnStopSignal(int) { stop_signal = 1; }

struct WorkerArgs {
  std::string run_dir, plugin, endpoint, checkpoint_root, resume;
  uint64_t trial_id = 0;
};

absl::StatusOr<WorkerArgs> ParseArgs(const std::vector<std::string>& args) {
  WorkerArgs parsed;
  std::map<std::string, std::string*> flags = {
      {"--run-dir", &parsed.run_dir},   {"--plugin", &parsed.plugin},
      {"--endpoint", &parsed.endpoint}, {"--checkpoint-root", &parsed.checkpoint_root},
      {"--resume", &parsed.resume}};
  std::string trial_id;
  flags["--trial-id"] = &trial_id;
  for (size_t i = 0; i < args.size(); ++i) {
    auto flag = flags.find(args[i]);
    if (flag == flags.end() || i + 1 == args.size()) {
      return absl::InvalidArgumentError(absl::StrCat("worker: unexpected argument '", args[i], "'"));
    }
    *flag->second = args[++i];
  }
  if (parsed.run_dir.empty() || parsed.plugin.empty() || parsed.endpoint.empty() ||
      parsed.checkpoint_root.empty() || !absl::SimpleAtoi(trial_id, &parsed.trial_id)) {
    return absl::InvalidArgumentError(
        "worker: needs --run-dir, --plugin, --trial-id, --endpoint and --checkpoint-root");
  }
  return parsed;
}

// Sends the trial's events to the supervisor; a stop request comes from it or from SIGTERM.
class LinkedEvents final : public TrialEvents {
 public:
  explicit LinkedEvents(WorkerLink& link) : link_(link) {}

  void OnMetrics(const MetricsReport& report) override { Send(report); }
  void OnProgress(const ProgressReport& report) override { Send(report); }
  void OnCheckpoint(const CheckpointReport& report) override { Send(report); }
  // Asked after every optimizer step; the channel is read at most every 10 ms so a fast loop
  // pays almost nothing for it.
  bool StopRequested() override {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ >= std::chrono::milliseconds(10)) {
      last_poll_ = now;
      while (std::optional<WorkerCommand> command = link_.PollCommand()) {
        if (std::holds_alternative<StopCommand>(*command)) stop_ = true;
      }
    }
    return stop_ || stop_signal != 0;
  }

 private:
  void Send(const WorkerMessage& message) {
    if (absl::Status status = link_.Send(message); !status.ok()) {
      std::fprintf(stderr, "worker: cannot report to the supervisor: %s\n",
                   std::string(status.message()).c_str());
    }
  }

  WorkerLink& link_;
  bool stop_ = false;
  std::chrono::steady_clock::time_point last_poll_;
};

// Everything one trial needs, built in order; the first failure is returned.
absl::StatusOr<TrialExit> RunTrial(const WorkerArgs& args, WorkerLink& link) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(args.run_dir + "/config.yaml");
  if (!config.ok()) return config.status();
  if (!config->experiment_seed) {
    return absl::FailedPreconditionError("config.yaml has no reproducibility.experiment_seed");
  }
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(args.plugin);
  if (!plugin.ok()) return plugin.status();

  const uint64_t trial_seed = TrialSeed(*config->experiment_seed, args.trial_id);
  DefaultMemoryProvider memory;
  ModelHostOptions host;
  host.context.global_batch_size = config->global_batch_size;
  host.context.per_slot_batch_size = config->global_batch_size;  // one slot
  host.context.trial_seed = trial_seed;
  host.context.trial_id = args.trial_id;
  host.hyperparameters = config->hyperparameters;
  host.memory = &memory;
  absl::StatusOr<std::unique_ptr<LoadedModel>> model = LoadedModel::Create(*plugin, std::move(host));
  if (!model.ok()) return model.status();

  std::unique_ptr<Optimizer> optimizer;
  if (!(*model)->has_optimizer()) {
    absl::StatusOr<OptimizerOptions> options =
        OptimizerOptionsFromHyperparameters(config->hyperparameters);
    if (!options.ok()) return options.status();
    absl::StatusOr<std::unique_ptr<Optimizer>> created =
        Optimizer::Create(*options, (*model)->arena());
    if (!created.ok()) return created.status();
    optimizer = *std::move(created);
  }
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(args.checkpoint_root);
  if (!storage.ok()) return storage.status();

  LinkedEvents events(link);
  TrialRunnerOptions options;
  options.config = &*config;
  options.trial_id = args.trial_id;
  options.trial_seed = trial_seed;
  options.model = model->get();
  options.optimizer = optimizer.get();
  options.storage = storage->get();
  options.events = &events;
  absl::StatusOr<std::unique_ptr<TrialRunner>> runner = TrialRunner::Create(options);
  if (!runner.ok()) return runner.status();
  if (!args.resume.empty()) {
    if (absl::Status status = (*runner)->Restore(args.resume); !status.ok()) return status;
  }
  std::printf("trial %llu: plugin %s, %s, %llu of %llu batches done\n",
              static_cast<unsigned long long>(args.trial_id), (*plugin)->name().c_str(),
              optimizer ? DescribeOptimizer(optimizer->options()).c_str() : "plugin optimizer",
              static_cast<unsigned long long>((*runner)->batches_trained()),
              static_cast<unsigned long long>((*runner)->schedule().total_batches));
  WorkerHello hello;
  hello.trial_id = args.trial_id;
  hello.pid = ::getpid();
  hello.batches_trained = (*runner)->batches_trained();
  hello.total_batches = (*runner)->schedule().total_batches;
  if (absl::Status status = link.Send(hello); !status.ok()) return status;
  return (*runner)->Run();
}

}  // namespace

int RunWorkerCommand(const std::vector<std::string>& arguments) {
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, OnStopSignal);
  absl::StatusOr<WorkerArgs> args = ParseArgs(arguments);
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<WorkerLink>> link = WorkerLink::Connect(args->endpoint);
  if (!link.ok()) {
    std::fprintf(stderr, "worker: %s\n", std::string(link.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<TrialExit> exit = RunTrial(*args, **link);
  TrialFinished finished;
  finished.trial_id = args->trial_id;
  finished.exit = exit.ok() ? *exit : TrialExit::kFailed;
  if (!exit.ok()) {
    finished.message = std::string(exit.status().message());
    std::fprintf(stderr, "error: %s\n", finished.message.c_str());
  }
  (void)(*link)->Send(finished);
  std::fflush(stdout);
  return exit.ok() ? 0 : 1;
}

}  // namespace cohort
