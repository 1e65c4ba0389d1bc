#include "runtime/worker/worker.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/base/clock.h"
#include "runtime/base/collective_failure.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/nccl_loader.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/observe/flight_files.h"
#include "runtime/observe/timeline_files.h"
#include "runtime/worker/one_slot_exchange.h"

namespace cohort {
namespace {

// optimizations.tensor_fusion_threshold (MB) bounds the buckets, which FitBucketLimits sizes to
// the arena's gradient so the exchange starts early; gradient_compression as the config validated
// it; the non-finite guard unless ignored.
ExchangeOptions ExchangeOptionsFor(const ExperimentConfig& config, const TensorArena& arena) {
  ExchangeOptions options;
  const BucketLimits limits =
      FitBucketLimits(arena, uint64_t{config.optimizations.tensor_fusion_threshold} << 20);
  options.bucket_bytes = limits.bucket_bytes;
  options.first_bucket_bytes = limits.first_bucket_bytes;
  options.compression = config.optimizations.gradient_compression;
  options.find_nonfinite = config.optimizations.nonfinite_gradients != NonfiniteGradients::kIgnore;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(WorkerOptions options) {
  if (options.events == nullptr || options.size == 0 || options.rank >= options.size ||
      (options.size > 1 && options.rendezvous == nullptr)) {
    return absl::InvalidArgumentError(
        "worker: needs events, a rank below the size and, with more than one rank, a rendezvous");
  }
  if (!options.config.experiment_seed) {
    return absl::FailedPreconditionError("config.yaml has no reproducibility.experiment_seed");
  }
  std::unique_ptr<Worker> worker(new Worker(std::move(options)));
  const WorkerOptions& o = worker->options_;
  worker->trial_seed_ =
      TrialSeed(*o.config.experiment_seed, o.trial_number != 0 ? o.trial_number : o.trial_id);
  // Each step, timed: where a start (and a restart) spends its time goes into the start line.
  struct Step {
    absl::Status (Worker::*run)();
    const char* name;  // nullptr: counted in "other"
  };
  const Step steps[] = {{&Worker::BuildModel, "model"},   {&Worker::BuildOptimizer, nullptr},
                        {&Worker::FormGroups, "group"},   {&Worker::BuildExchange, nullptr},
                        {&Worker::OpenTimeline, nullptr}, {&Worker::BuildRunner, nullptr},
                        {&Worker::Resume, "checkpoint"}};
  const double created = SystemClock().MonotonicSeconds();
  std::string named;
  double other = 0;
  for (const Step& step : steps) {
    const double begin = SystemClock().MonotonicSeconds();
    if (absl::Status status = (worker.get()->*step.run)(); !status.ok()) {
      // Forming the groups waits for the other ranks: a peer gone is often another's failure.
      if (step.run == &Worker::FormGroups) return CollectiveFailure(status, status.message());
      return status;
    }
    const double seconds = SystemClock().MonotonicSeconds() - begin;
    if (step.name == nullptr) {
      other += seconds;
    } else {
      absl::StrAppendFormat(&named, "%s %.3f s, ", step.name, seconds);
    }
  }
  const WorkerOptions& s = worker->options_;
  std::printf(
      "trial %llu rank %u of %u: plugin %s, %s, %llu of %llu batches done; "
      "ready in %.3f s (%sother %.3f s)\n",
      static_cast<unsigned long long>(s.trial_id), s.rank, s.size, worker->plugin_->name().c_str(),
      worker->optimizer_ ? DescribeOptimizer(worker->optimizer_->options()).c_str()
                         : "plugin optimizer",
      static_cast<unsigned long long>(worker->runner_->batches_trained()),
      static_cast<unsigned long long>(worker->runner_->schedule().total_batches),
      SystemClock().MonotonicSeconds() - created, named.c_str(), other);
  std::fflush(stdout);
  return worker;
}

Worker::~Worker() {
  // What runs on the device's streams ends before the members go: the runner, then the exchange.
  runner_.reset();
  exchange_.reset();
}

bool Worker::on_gpu() const { return device_.cuda != nullptr && HasDeviceBlocks(model_->arena()); }

absl::Status Worker::BuildModel() {
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin =
      PluginLibrary::Open(options_.plugin);
  if (!plugin.ok()) return plugin.status();
  plugin_ = *std::move(plugin);
  absl::StatusOr<WorkerDevice> device =
      OpenWorkerDevice(options_.device.empty() ? nullptr : options_.device.c_str());
  if (!device.ok()) return device.status();
  device_ = *std::move(device);
  // Gradients are zeroed on the plugin's stream, behind the optimizer step, without a wait.
  if (device_.cuda != nullptr) memory_.ZeroOnStream(device_.device.ordinal, device_.stream());
  const ExperimentConfig& config = options_.config;
  ModelHostOptions host;
  host.context.rank = host.context.local_rank = options_.rank;
  host.context.size = host.context.local_size = options_.size;
  host.context.global_batch_size = config.global_batch_size;
  host.context.per_slot_batch_size = config.global_batch_size / options_.size;
  host.context.trial_seed = trial_seed_;
  host.context.trial_id = options_.trial_id;
  host.context.device = device_.device;
  host.context.stream = device_.stream();
  host.hyperparameters = config.hyperparameters;
  host.memory = &memory_;
  if (device_.cuda != nullptr) host.device_values = &device_.cuda->value_reader();
  // The exchange exists only once the model registered its tensors; the hook finds it then.
  host.on_gradients_ready = [this](uint32_t tensor, uint64_t offset, uint64_t count) {
    if (exchange_) exchange_->OnGradientsReady(tensor, offset, count);
  };
  absl::StatusOr<std::unique_ptr<LoadedModel>> model =
      LoadedModel::Create(plugin_, std::move(host));
  if (!model.ok()) return model.status();
  model_ = *std::move(model);
  return absl::OkStatus();
}

absl::Status Worker::BuildOptimizer() {
  const OptimizationsConfig& optimizations = options_.config.optimizations;
  // The config's mistakes: every attempt would meet them again.
  if (model_->has_optimizer()) {
    absl::Status keys = CheckOwnOptimizerKeys(optimizations, model_->plugin().name());
    return keys.ok() ? keys : PermanentFailure(std::move(keys));
  }
  const bool scaled = optimizations.learning_rate_scaling != LearningRateScaling::kNone;
  absl::StatusOr<OptimizerOptions> options =
      OptimizerOptionsFromHyperparameters(options_.config.hyperparameters);
  if (!options.ok()) return PermanentFailure(options.status());
  if (scaled) {
    const double given = options->learning_rate;
    options->learning_rate = ScaledLearningRate(optimizations, given, options_.size);
    if (options_.rank == 0) {
      std::printf("learning rate %g, scaled %s from %u to %u slot%s: %g\n", given,
                  std::string(PolicyName(optimizations.learning_rate_scaling)).c_str(),
                  optimizations.learning_rate_reference_slots, options_.size,
                  options_.size == 1 ? "" : "s", options->learning_rate);
      std::fflush(stdout);
    }
  }
  ArenaShard shard;
  if (optimizations.zero_stage != 0) shard = {options_.rank, options_.size};
  absl::StatusOr<std::unique_ptr<Optimizer>> created = Optimizer::Create(
      *options, model_->arena(), on_gpu() ? device_.update_kernels.get() : nullptr, shard);
  if (!created.ok()) return created.status();
  optimizer_ = *std::move(created);
  if (!shard.whole() && options_.rank == 0) {
    std::printf(
        "optimizer state sharded over %u slots (optimizations.zero_stage %u): %.3g MB on "
        "rank 0\n",
        shard.size, optimizations.zero_stage, static_cast<double>(optimizer_->state_bytes()) / 1e6);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

absl::Status Worker::FormGroups() {
  const auto timeout = std::chrono::seconds(options_.config.optimizations.collective_timeout);
  if (options_.size == 1) {
    if (!options_.exchange_at_one_slot) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> group =
        OneRankGradientGroup(device_, on_gpu(), timeout);
    if (!group.ok()) return group.status();
    gradient_collective_ = *std::move(group);
    return absl::OkStatus();
  }
  GlooOptions gloo;
  gloo.timeout = timeout;
  gloo.prefix = options_.group_prefix;
  if (!options_.gloo_hostname.empty()) gloo.hostname = options_.gloo_hostname;
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> host =
      CreateGlooBackend(options_.rank, options_.size, *options_.rendezvous, gloo);
  if (!host.ok()) return host.status();
  collective_ = Recorded(*std::move(host), kHostGroup);
  // A checkpoint's optimizer shards travel in the background, beside training's collectives.
  if (options_.config.optimizations.zero_stage != 0 && options_.config.checkpoint_storage.async) {
    GlooOptions shards = gloo;
    shards.prefix = options_.group_prefix + "/checkpoint";
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> group =
        CreateGlooBackend(options_.rank, options_.size, *options_.rendezvous, shards);
    if (!group.ok()) return group.status();
    checkpoint_collective_ = Recorded(*std::move(group), kCheckpointGroup);
  }
  if (!on_gpu()) return absl::OkStatus();
  NcclOptions nccl;
  nccl.device = device_.device.ordinal;
  nccl.stream = device_.cuda->communication_stream();
  nccl.timeout = timeout;
  nccl.prefix = options_.group_prefix + "/nccl";
  absl::StatusOr<std::unique_ptr<CollectiveBackend>> gradients =
      CreateNcclBackend(options_.rank, options_.size, *options_.rendezvous, nccl);
  if (!gradients.ok()) return gradients.status();
  gradient_collective_ = Recorded(*std::move(gradients), kGradientGroup);
  return absl::OkStatus();
}

// Every collective of a trial of several ranks goes to the rank's flight record, beside the
// checkpoints, for `cohort trial diagnose` and a failed trial's error. A record that cannot be
// made costs the diagnosis only: the rank says so and trains without it.
std::unique_ptr<CollectiveBackend> Worker::Recorded(std::unique_ptr<CollectiveBackend> group,
                                                    uint8_t flight_group) {
  if (!flight_) {
    absl::StatusOr<std::string> path = RankFlightPath(options_.checkpoint_root, options_.trial_id,
                                                      options_.task_id, options_.rank);
    absl::StatusOr<std::unique_ptr<FlightRecorder>> recorder =
        path.ok() ? FlightRecorder::Create(*path, {.trial_id = options_.trial_id,
                                                   .task_id = options_.task_id,
                                                   .attempt = options_.attempt,
                                                   .rank = options_.rank,
                                                   .size = options_.size})
                  : path.status();
    if (!recorder.ok()) {
      std::fprintf(stderr, "warning: no flight record of this rank's collectives: %s\n",
                   std::string(recorder.status().message()).c_str());
      return group;
    }
    flight_ = *std::move(recorder);
  }
  return std::make_unique<RecordedCollective>(std::move(group), *flight_, flight_group);
}

absl::Status Worker::BuildExchange() {
  CollectiveBackend* moves_gradients = gradient_collective();
  if (moves_gradients == nullptr) return absl::OkStatus();
  ExchangeOptions options = ExchangeOptionsFor(options_.config, model_->arena());
  if (on_gpu()) options.device = device_.cuda.get();
  options.reduce_to_shards = options_.config.optimizations.zero_stage == 2 && options_.size > 1;
  if (options_.rank == 0) {
    options.plan_changed = [](const std::vector<GradientBucket>& plan, const std::string& why) {
      std::printf("gradient exchange: %zu buckets, cut again %s\n", plan.size(), why.c_str());
      std::fflush(stdout);
    };
  }
  absl::StatusOr<std::unique_ptr<GradientExchange>> created =
      GradientExchange::Create(model_->arena(), *moves_gradients, options);
  if (!created.ok()) return created.status();
  exchange_ = *std::move(created);
  if (options_.rank == 0) {
    const size_t buckets = exchange_->plan().size();
    std::printf("gradient exchange%s: %zu bucket%s over %s, compression %s\n",
                options_.size == 1 ? " at one slot" : "", buckets, buckets == 1 ? "" : "s",
                moves_gradients->name().c_str(), DescribeCompression(options.compression).c_str());
  }
  return absl::OkStatus();
}

// profiling.enabled: this rank's timeline, beside the checkpoints, where the orchestrator merges a
// trial's ranks and attempts whenever one of its tasks ends.
absl::Status Worker::OpenTimeline() {
  const ExperimentConfig& config = options_.config;
  if (!config.profiling_enabled) return absl::OkStatus();
  Clock& clock = SystemClock();
  absl::StatusOr<std::string> path =
      RankTimelinePath(options_.checkpoint_root, options_.trial_id, options_.attempt, options_.rank,
                       static_cast<uint64_t>(clock.UnixSeconds() * 1000));
  if (!path.ok()) return path.status();
  TraceBatchWindow window;
  window.first = config.profiling_begin_on_batch;
  if (config.profiling_end_after_batch) window.last = *config.profiling_end_after_batch;
  absl::StatusOr<std::unique_ptr<TraceWriter>> opened = TraceWriter::Open(
      *path, options_.rank, clock.UnixSeconds() - clock.MonotonicSeconds(), window);
  if (!opened.ok()) return opened.status();
  trace_ = *std::move(opened);
  return absl::OkStatus();
}

absl::Status Worker::BuildRunner() {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(options_.checkpoint_root);
  if (!storage.ok()) return storage.status();
  storage_ = *std::move(storage);
  // A rank stuck in its own work says so in its log while the other ranks wait for it.
  if (options_.size > 1) {
    watchdog_.emplace(options_.rank, phases_, options_.config.optimizations.collective_timeout,
                      options_.stop_signalled);
  }
  TrialRunnerOptions options;
  options.config = &options_.config;
  options.phases = &phases_;
  options.trace = trace_.get();
  options.validate_at_resume = options_.validate_at_resume;
  options.trial_id = options_.trial_id;
  options.trial_seed = trial_seed_;
  options.model = model_.get();
  options.optimizer = optimizer_.get();
  options.storage = storage_.get();
  options.events = options_.events;
  options.collective = collective_.get();
  options.exchange = exchange_.get();
  options.checkpoint_collective = checkpoint_collective_.get();
  if (on_gpu()) {
    options.device_gradients = &device_.cuda->gradient_ops();
    options.device = device_.cuda.get();
    options.device_collective = gradient_collective_.get();  // NCCL
  }
  absl::StatusOr<std::unique_ptr<TrialRunner>> runner = TrialRunner::Create(options);
  if (!runner.ok()) return runner.status();
  runner_ = *std::move(runner);
  return absl::OkStatus();
}

absl::Status Worker::Resume() {
  if (options_.resume.empty()) return absl::OkStatus();
  const double begin = SystemClock().MonotonicSeconds();
  absl::StatusOr<std::vector<std::string>> warnings = runner_->RestoreNewestWhole(options_.resume);
  if (!warnings.ok()) return warnings.status();
  for (const std::string& warning : *warnings) std::printf("warning: %s\n", warning.c_str());
  // In the timeline a restart shows as the restore that begins its attempt.
  if (trace_) {
    trace_->Complete(
        TraceWriter::kTrainingThread,
        options_.attempt > 0
            ? absl::StrCat("restart ", options_.attempt, ": restoring checkpoint ", options_.resume)
            : absl::StrCat("resuming from checkpoint ", options_.resume),
        begin, SystemClock().MonotonicSeconds(), runner_->batches_trained());
  }
  return absl::OkStatus();
}

}  // namespace cohort
