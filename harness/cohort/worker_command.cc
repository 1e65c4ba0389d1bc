#include "harness/cohort/worker_command.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/one_slot_exchange.h"
#include "harness/cohort/rank_watchdog.h"
#include "harness/cohort/worker_device.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/base/clock.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/nccl_loader.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/channel_rendezvous_store.h"
#include "runtime/control/worker_link.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/observe/timeline_files.h"
#include "runtime/optim/optimizer.h"
#include "runtime/optim/optimizer_options.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/security/curve_client_config.h"
#include "runtime/security/rendezvous_key_variables.h"
#include "runtime/trial/permanent_failure.h"
#include "runtime/trial/trial_runner.h"

namespace cohort {
namespace {

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void OnStopSignal(int) { stop_signal = 1; }

struct WorkerArgs {
  std::string run_dir, plugin, endpoint, checkpoint_root, resume;
  // Where the ranks meet when they span agents (a RendezvousService of the orchestrator's), and
  // the task's key prefix there; empty: the supervisor at `endpoint` serves the rendezvous.
  std::string rendezvous, rendezvous_prefix;
  uint64_t trial_id = 0;
  uint32_t rank = 0, size = 1, attempt = 0;
};

absl::StatusOr<WorkerArgs> ParseArgs(const std::vector<std::string>& args) {
  WorkerArgs parsed;
  std::map<std::string, std::string*> flags = {
      {"--run-dir", &parsed.run_dir},   {"--plugin", &parsed.plugin},
      {"--endpoint", &parsed.endpoint}, {"--checkpoint-root", &parsed.checkpoint_root},
      {"--resume", &parsed.resume},     {"--rendezvous", &parsed.rendezvous},
      {"--rendezvous-prefix", &parsed.rendezvous_prefix}};
  std::string trial_id, rank = "0", size = "1", attempt = "0";
  flags["--trial-id"] = &trial_id;
  flags["--rank"] = &rank;
  flags["--size"] = &size;
  flags["--attempt"] = &attempt;
  for (size_t i = 0; i < args.size(); ++i) {
    auto flag = flags.find(args[i]);
    if (flag == flags.end() || i + 1 == args.size()) {
      return absl::InvalidArgumentError(absl::StrCat("worker: unexpected argument '", args[i], "'"));
    }
    *flag->second = args[++i];
  }
  if (parsed.run_dir.empty() || parsed.plugin.empty() || parsed.endpoint.empty() ||
      parsed.checkpoint_root.empty() || !absl::SimpleAtoi(trial_id, &parsed.trial_id) ||
      !absl::SimpleAtoi(rank, &parsed.rank) || !absl::SimpleAtoi(size, &parsed.size) ||
      !absl::SimpleAtoi(attempt, &parsed.attempt) || parsed.size == 0 ||
      parsed.rank >= parsed.size) {
    return absl::InvalidArgumentError(
        "worker: needs --run-dir, --plugin, --trial-id, --endpoint and --checkpoint-root, and a "
        "--rank below --size");
  }
  return parsed;
}

// The keys the agent handed over for a CURVE rendezvous (rendezvous_key_variables.h), or nullopt
// without them. Taken out of the environment: nothing the plugin starts inherits the secret key.
absl::StatusOr<std::optional<CurveClientConfig>> TakeRendezvousKeys() {
  absl::StatusOr<std::optional<CurveClientConfig>> keys =
      ReadRendezvousKeyVariables([](const char* name) { return std::getenv(name); });
  for (const char* name : {kRendezvousServerKeyVariable, kRendezvousPublicKeyVariable,
                           kRendezvousSecretKeyVariable}) {
    ::unsetenv(name);
  }
  return keys;
}

// Sends the trial's events to the supervisor; a stop request comes from it or from SIGTERM.
//
// Heartbeats come from the training loop itself: one right after WorkerHello, then one from any
// call the loop makes into these events (each optimizer step asks StopRequested; rank 0 also
// reports, each validation batch says StillWorking) once kHeartbeatIntervalSeconds have passed
// since the last. Silence therefore means the loop is blocked, not merely alive. The loop makes
// no such call, and so sends nothing, through the first agreement of the ranks on the
// parameters, the merging of validation metrics and the writing of a checkpoint: a long one looks
// silent though not stuck.
class LinkedEvents final : public TrialEvents {
 public:
  LinkedEvents(WorkerLink& link, uint64_t trial_id, uint32_t rank)
      : link_(link), trial_id_(trial_id), rank_(rank) {}

  // The runner whose batches the heartbeats report; until then they report 0.
  void Follow(const TrialRunner& runner) { runner_ = &runner; }

  // Sends a Heartbeat now.
  void Beat() {
    last_beat_ = std::chrono::steady_clock::now();
    Send(Heartbeat{trial_id_, rank_, SystemClock().UnixSeconds(),
                   runner_ != nullptr ? runner_->batches_trained() : 0});
  }

  // Commands that arrived while the link was busy with something else (a rendezvous).
  void Take(const std::vector<WorkerCommand>& commands) {
    for (const WorkerCommand& command : commands) {
      if (std::holds_alternative<StopCommand>(command)) stop_ = true;
    }
  }

  void OnMetrics(const MetricsReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void OnProgress(const ProgressReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void OnCheckpoint(const CheckpointReport& report) override {
    Send(report);
    MaybeBeat();
  }
  void StillWorking() override { MaybeBeat(); }
  // Asked after every optimizer step; the channel is read (and a heartbeat considered) at most
  // every 10 ms so a fast loop pays almost nothing for it.
  bool StopRequested() override {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ >= std::chrono::milliseconds(10)) {
      last_poll_ = now;
      while (std::optional<WorkerCommand> command = link_.PollCommand()) {
        if (std::holds_alternative<StopCommand>(*command)) stop_ = true;
      }
      MaybeBeat(now);
    }
    return stop_ || stop_signal != 0;
  }

 private:
  // A heartbeat once kHeartbeatIntervalSeconds have passed since the last one.
  void MaybeBeat(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
    if (now - last_beat_ >= std::chrono::duration<double>(kHeartbeatIntervalSeconds)) Beat();
  }

  void Send(const WorkerMessage& message) {
    if (absl::Status status = link_.Send(message); !status.ok()) {
      std::fprintf(stderr, "worker: cannot report to the supervisor: %s\n",
                   std::string(status.message()).c_str());
    }
  }

  WorkerLink& link_;
  const uint64_t trial_id_;
  const uint32_t rank_;
  const TrialRunner* runner_ = nullptr;
  bool stop_ = false;
  std::chrono::steady_clock::time_point last_poll_;
  std::chrono::steady_clock::time_point last_beat_;
};

// optimizations.tensor_fusion_threshold (MB) bounds the buckets, which FitBucketLimits sizes to
// the arena's gradient so the exchange starts early; gradient_compression is taken as the config
// validated it.
absl::StatusOr<ExchangeOptions> ExchangeOptionsFor(const ExperimentConfig& config, const TensorArena& arena) {
  ExchangeOptions options;
  const BucketLimits limits =
      FitBucketLimits(arena, uint64_t{config.optimizations.tensor_fusion_threshold} << 20);
  options.bucket_bytes = limits.bucket_bytes;
  options.first_bucket_bytes = limits.first_bucket_bytes;
  options.compression = config.optimizations.gradient_compression;
  options.find_nonfinite = config.optimizations.nonfinite_gradients != "ignore";
  return options;
}

// Everything one trial needs, built in order; the first failure is returned. With
// `rendezvous_keys`, the link to --rendezvous is a CURVE client.
absl::StatusOr<TrialExit> RunTrial(const WorkerArgs& args,
                                   const std::optional<CurveClientConfig>& rendezvous_keys,
                                   WorkerLink& link) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(args.run_dir + "/config.yaml");
  if (!config.ok()) return config.status();
  if (!config->experiment_seed) {
    return absl::FailedPreconditionError("config.yaml has no reproducibility.experiment_seed");
  }
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(args.plugin);
  if (!plugin.ok()) return plugin.status();

  const uint64_t trial_seed = TrialSeed(*config->experiment_seed, args.trial_id);
  // Outlives everything that runs on the device: the exchange's reducers, NCCL, the arena.
  absl::StatusOr<WorkerDevice> device = OpenWorkerDevice(std::getenv("COHORT_DEVICE"));
  if (!device.ok()) return device.status();
  DefaultMemoryProvider memory;
  // Gradients are zeroed on the plugin's stream, behind the optimizer step, without a wait.
  if (device->cuda != nullptr) memory.ZeroOnStream(device->device.ordinal, device->stream());
  ModelHostOptions host;
  host.context.rank = host.context.local_rank = args.rank;
  host.context.size = host.context.local_size = args.size;
  host.context.global_batch_size = config->global_batch_size;
  host.context.per_slot_batch_size = config->global_batch_size / args.size;
  host.context.trial_seed = trial_seed;
  host.context.trial_id = args.trial_id;
  host.context.device = device->device;
  host.context.stream = device->stream();
  host.hyperparameters = config->hyperparameters;
  host.memory = &memory;
  if (device->cuda != nullptr) host.device_values = &device->cuda->value_reader();
  host.log = StderrLogSink(args.rank);
  // The exchange exists only once the model registered its tensors; the hook finds it then.
  std::unique_ptr<GradientExchange> exchange;
  host.on_gradients_ready = [&exchange](uint32_t tensor, uint64_t offset, uint64_t count) {
    if (exchange) exchange->OnGradientsReady(tensor, offset, count);
  };
  absl::StatusOr<std::unique_ptr<LoadedModel>> model = LoadedModel::Create(*plugin, std::move(host));
  if (!model.ok()) return model.status();

  // Whether the plugin put its tensors on the slot's GPU (a plugin may keep them on the host).
  const bool on_gpu = device->cuda != nullptr && HasDeviceBlocks((*model)->arena());
  std::unique_ptr<Optimizer> optimizer;
  if (!(*model)->has_optimizer()) {
    absl::StatusOr<OptimizerOptions> options =
        OptimizerOptionsFromHyperparameters(config->hyperparameters);
    if (!options.ok()) return options.status();
    absl::StatusOr<std::unique_ptr<Optimizer>> created = Optimizer::Create(
        *options, (*model)->arena(), on_gpu ? &device->cuda->update_kernels() : nullptr);
    if (!created.ok()) return created.status();
    optimizer = *std::move(created);
  }
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(args.checkpoint_root);
  if (!storage.ok()) return storage.status();

  LinkedEvents events(link, args.trial_id, args.rank);
  // Gloo for the host collectives (metrics, agreement, stop) and, on the CPU, the gradients;
  // NCCL for the gradients of tensors on a GPU.
  // With more than one slot, or one slot exchanging on request (one_slot_exchange.h).
  std::unique_ptr<CollectiveBackend> collective;
  std::unique_ptr<CollectiveBackend> gradient_collective;
  CollectiveBackend* moves_gradients = nullptr;  // one of the two
  if (args.size > 1) {
    std::unique_ptr<WorkerLink> rendezvous_link;  // closed once the group is formed
    if (!args.rendezvous.empty()) {
      WorkerLinkOptions options;
      if (rendezvous_keys) {
        options.setup_socket = [&rendezvous_keys](zmq::socket_t& socket) {
          return ConfigureCurveClient(socket, *rendezvous_keys);
        };
      }
      absl::StatusOr<std::unique_ptr<WorkerLink>> connected =
          WorkerLink::Connect(args.rendezvous, options);
      if (!connected.ok()) return connected.status();
      rendezvous_link = *std::move(connected);
    }
    ChannelRendezvousStore store(rendezvous_link != nullptr ? *rendezvous_link : link);
    GlooOptions gloo;
    gloo.timeout = std::chrono::seconds(config->optimizations.collective_timeout);
    // Each attempt forms its group under its own keys: a restart never reads stale addresses.
    gloo.prefix = args.rendezvous.empty()
                      ? absl::StrCat("trial-", args.trial_id, "/attempt-", args.attempt)
                      : absl::StrCat(args.rendezvous_prefix, "attempt-", args.attempt);
    if (const char* hostname = std::getenv("COHORT_GLOO_HOSTNAME");
        hostname != nullptr && hostname[0] != '\0') {
      gloo.hostname = hostname;
    }
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
        CreateGlooBackend(args.rank, args.size, store, gloo);
    events.Take(store.TakePendingCommands());
    if (!backend.ok()) return backend.status();
    collective = *std::move(backend);
    moves_gradients = collective.get();
    if (on_gpu) {
      NcclOptions nccl;
      nccl.device = device->device.ordinal;
      nccl.stream = device->cuda->communication_stream();
      nccl.timeout = std::chrono::seconds(config->optimizations.collective_timeout);
      nccl.prefix = gloo.prefix + "/nccl";
      absl::StatusOr<std::unique_ptr<CollectiveBackend>> created_nccl =
          CreateNcclBackend(args.rank, args.size, store, nccl);
      events.Take(store.TakePendingCommands());
      if (!created_nccl.ok()) return created_nccl.status();
      gradient_collective = *std::move(created_nccl);
      moves_gradients = gradient_collective.get();
    }
  } else if (ExchangeAtOneSlotRequested(std::getenv(kExchangeAtOneSlotVariable))) {
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> group = OneRankGradientGroup(
        *device, on_gpu, std::chrono::seconds(config->optimizations.collective_timeout));
    if (!group.ok()) return group.status();
    gradient_collective = *std::move(group);
    moves_gradients = gradient_collective.get();
  }
  if (moves_gradients != nullptr) {
    absl::StatusOr<ExchangeOptions> exchange_options = ExchangeOptionsFor(*config, (*model)->arena());
    if (!exchange_options.ok()) return exchange_options.status();
    if (on_gpu) exchange_options->device = device->cuda.get();
    if (args.rank == 0) {
      exchange_options->plan_changed = [](const std::vector<GradientBucket>& plan) {
        std::printf(
            "gradient exchange: %zu buckets, cut again along the order backward finished "
            "the gradients in\n",
            plan.size());
        std::fflush(stdout);
      };
    }
    absl::StatusOr<std::unique_ptr<GradientExchange>> created =
        GradientExchange::Create((*model)->arena(), *moves_gradients, *exchange_options);
    if (!created.ok()) return created.status();
    exchange = *std::move(created);
    if (args.rank == 0) {
      std::printf("gradient exchange%s: %zu buckets over %s, compression %s\n",
                  args.size == 1 ? " at one slot" : "",
                  exchange->plan().size(), moves_gradients->name().c_str(),
                  DescribeCompression(exchange_options->compression).c_str());
    }
  }
  // A rank stuck in its own work says so in its log while the other ranks wait for it.
  PhaseBoard phases;
  std::optional<RankWatchdog> watchdog;
  if (args.size > 1) {
    watchdog.emplace(args.rank, phases, config->optimizations.collective_timeout,
                     [] { return stop_signal != 0; });
  }
  // profiling.enabled: this rank's timeline, beside the checkpoints, where the orchestrator
  // merges a trial's ranks and attempts whenever one of its tasks ends.
  std::unique_ptr<TraceWriter> trace;
  if (config->profiling_enabled) {
    Clock& clock = SystemClock();
    absl::StatusOr<std::string> path =
        RankTimelinePath(args.checkpoint_root, args.trial_id, args.attempt, args.rank,
                         static_cast<uint64_t>(clock.UnixSeconds() * 1000));
    if (!path.ok()) return path.status();
    TraceBatchWindow window;
    window.first = config->profiling_begin_on_batch;
    if (config->profiling_end_after_batch) window.last = *config->profiling_end_after_batch;
    absl::StatusOr<std::unique_ptr<TraceWriter>> opened = TraceWriter::Open(
        *path, args.rank, clock.UnixSeconds() - clock.MonotonicSeconds(), window);
    if (!opened.ok()) return opened.status();
    trace = *std::move(opened);
  }
  TrialRunnerOptions options;
  options.config = &*config;
  options.phases = &phases;
  options.trace = trace.get();
  options.trial_id = args.trial_id;
  options.trial_seed = trial_seed;
  options.model = model->get();
  options.optimizer = optimizer.get();
  options.storage = storage->get();
  options.events = &events;
  options.collective = collective.get();
  options.exchange = exchange.get();
  if (on_gpu) options.device_gradients = &device->cuda->gradient_ops();
  absl::StatusOr<std::unique_ptr<TrialRunner>> runner = TrialRunner::Create(options);
  if (!runner.ok()) return runner.status();
  if (!args.resume.empty()) {
    const double begin = SystemClock().MonotonicSeconds();
    absl::StatusOr<std::vector<std::string>> warnings = (*runner)->RestoreNewestWhole(args.resume);
    if (!warnings.ok()) return warnings.status();
    for (const std::string& warning : *warnings) std::printf("warning: %s\n", warning.c_str());
    // In the timeline a restart shows as the restore that begins its attempt.
    if (trace) {
      trace->Complete(TraceWriter::kTrainingThread,
                      args.attempt > 0 ? absl::StrCat("restart ", args.attempt,
                                                      ": restoring checkpoint ", args.resume)
                                       : absl::StrCat("resuming from checkpoint ", args.resume),
                      begin, SystemClock().MonotonicSeconds(), (*runner)->batches_trained());
    }
  }
  std::printf("trial %llu rank %u of %u: plugin %s, %s, %llu of %llu batches done\n",
              static_cast<unsigned long long>(args.trial_id), args.rank, args.size,
              (*plugin)->name().c_str(),
              optimizer ? DescribeOptimizer(optimizer->options()).c_str() : "plugin optimizer",
              static_cast<unsigned long long>((*runner)->batches_trained()),
              static_cast<unsigned long long>((*runner)->schedule().total_batches));
  WorkerHello hello;
  hello.trial_id = args.trial_id;
  hello.pid = ::getpid();
  hello.rank = args.rank;
  hello.batches_trained = (*runner)->batches_trained();
  hello.total_batches = (*runner)->schedule().total_batches;
  if (absl::Status status = link.Send(hello); !status.ok()) return status;
  events.Follow(**runner);
  events.Beat();
  absl::StatusOr<TrialExit> exit = (*runner)->Run();
  // The exchange goes first: its reducers use the collectives, the arena and the device.
  runner->reset();
  exchange.reset();
  return exit;
}

}  // namespace

int RunWorkerCommand(const std::vector<std::string>& arguments) {
  // A worker never outlives its supervisor (the agent, or `cohort run`): killed with it, it cannot
  // go on training, or write checkpoints, beside the copy the orchestrator places again. The
  // supervisor names itself, so a worker orphaned before prctl took effect notices too.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (const char* supervisor = std::getenv("COHORT_SUPERVISOR_PID");
      supervisor != nullptr && std::atoll(supervisor) != static_cast<long long>(::getppid())) {
    std::fprintf(stderr, "worker: its supervisor (pid %s) is gone\n", supervisor);
    return 1;
  }
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, OnStopSignal);
  // A peer rank that died leaves its Gloo connection closed: writing to it must fail the
  // collective with an error naming the phase, not kill this healthy rank with SIGPIPE (which
  // would also blame it for the peer's death).
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<WorkerArgs> args = ParseArgs(arguments);
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  // Before anything else runs in this process.
  const absl::StatusOr<std::optional<CurveClientConfig>> rendezvous_keys = TakeRendezvousKeys();
  absl::StatusOr<std::unique_ptr<WorkerLink>> link = WorkerLink::Connect(args->endpoint);
  if (!link.ok()) {
    std::fprintf(stderr, "worker: %s\n", std::string(link.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<TrialExit> exit = rendezvous_keys.ok()
                                       ? RunTrial(*args, *rendezvous_keys, **link)
                                       : absl::StatusOr<TrialExit>(rendezvous_keys.status());
  TrialFinished finished;
  finished.trial_id = args->trial_id;
  finished.rank = static_cast<int32_t>(args->rank);
  finished.exit = exit.ok() ? *exit : TrialExit::kFailed;
  if (!exit.ok()) {
    finished.message = std::string(exit.status().message());
    std::fprintf(stderr, "error: %s\n", finished.message.c_str());
  }
  (void)(*link)->Send(finished);
  std::fflush(stdout);
  if (exit.ok()) return 0;
  return IsPermanentFailure(exit.status()) ? kPermanentFailureExitCode : 1;
}

}  // namespace cohort
