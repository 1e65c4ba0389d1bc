// What the trial loop costs per training batch, measured against peers that do the same training
// with no runtime around it. Cohort's side is TrialRunner driving the `mlp` plugin through
// LoadedModel with the built-in SGD optimizer, at the mlp example's shape (batch 32, 32 inputs,
// two hidden layers of 64, 10 classes): the sampler, the plugin ABI, the SDK's C++ layer and its
// gradients-ready hooks, the metrics, the optimizer over the arena, zeroing the arena, the
// schedule's checks and the progress and training-metric reports.
//
// Peers, each on the same records from the same initial parameters, each followed by a plain SGD
// loop and a memset of the gradients:
//   direct_mlp_sgd_loop        the network itself (mlp_core), linked into this program
//   plugin_call_sgd_loop       the plugin's train_batch, called through the bare C ABI table
// The second runs the very machine code the runner's calls run. The first runs a second copy of
// the network's code, and where a copy lands in memory moves its speed by several percent (on an
// x86-64 EPYC, shifting the same object code by 16 bytes changed the network's speed by up to
// 20%), so its ratio carries that placement error; the second's does not, but it leaves the
// plugin's own glue (the SDK layer, gathering records, adding metrics) on both sides.
// After the same batches every side's parameters must equal the runner's bit for bit (the bench
// fails otherwise): all sides do the same arithmetic.
//
// The timed window is exactly BATCHES training batches of each side, after a few untimed ones and
// inside the first epoch (so an epoch's reshuffle never falls in it). The runner's window is read
// at the StopRequested calls that follow each optimizer step; the bench asks it to stop at the
// window's end, so the checkpoint a stop writes comes after it, and validation never comes due.
// The sides take turns in rotating order for ROUNDS rounds, in each of PROCESSES fresh processes
// (each lays the code out anew, the runtime's and the plugin's at distances of their own, which
// moves a whole process's times by a percent or more); medians over all rounds are reported.
//
//   trial_loop_bench MLP_PLUGIN_PATH [PROCESSES=5] [ROUNDS=6] [BATCHES=600]
//
// Prints JSON lines {"name", "value" (the runner's us per batch), "unit": "us", "peer",
// "peer_value" (the peer's), "ratio" (value / peer_value)}:
//   trial_loop_per_batch                  process CPU time (all threads), direct_mlp_sgd_loop;
//                                         CPU time is what a busy machine disturbs least
//   trial_loop_wall_per_batch             wall time, direct_mlp_sgd_loop
//   trial_loop_over_plugin_call_per_batch process CPU time, plugin_call_sgd_loop
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "plugins/mlp/mlp_network.h"
#include "plugins/mlp/synthetic_dataset.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/optim/optimizer.h"
#include "runtime/plugin/batch_metrics.h"
#include "runtime/plugin/error.h"
#include "runtime/plugin/host_api.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/model_host.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/trial/record_sampler.h"
#include "runtime/trial/trial_events.h"
#include "runtime/trial/trial_runner.h"

namespace {

// The mlp example (examples/mlp.yaml) with plain SGD, the plugin's defaults spelled out.
constexpr uint64_t kBatchSize = 32;
constexpr size_t kInputs = 32;
constexpr size_t kHiddenSize = 64;
constexpr size_t kHiddenLayers = 2;
constexpr size_t kClasses = 10;
constexpr uint64_t kTrainingRecords = 60000;
constexpr double kLearningRate = 0.1;
constexpr uint64_t kExperimentSeed = 7;
constexpr uint64_t kTrialId = 1;
constexpr uint64_t kWarmupBatches = 25;  // untimed, before each window
constexpr uint64_t kBatchesPerEpoch = kTrainingRecords / kBatchSize;
// argv[1] of the child processes that measure (see MeasureRoundsInChild).
constexpr char kChildFlag[] = "--measure-in-this-process";

std::string ConfigYaml() {
  return absl::StrFormat(
      "name: trial-loop-bench\n"
      "entrypoint: mlp\n"
      "hyperparameters:\n"
      "  global_batch_size: %d\n"
      "  optimizer: sgd\n"
      "  learning_rate: %.17g\n"
      "  hidden_size: %d\n"
      "  hidden_layers: %d\n"
      "  synthetic_train_records: %d\n"
      "  synthetic_input_dim: %d\n"
      "  synthetic_classes: %d\n"
      "searcher:\n"
      "  name: single\n"
      "  metric: accuracy\n"
      "  smaller_is_better: false\n"
      "  max_length:\n"
      "    batches: 1000000000\n"
      "scheduling_unit: 100\n"
      "reproducibility:\n"
      "  experiment_seed: %d\n",
      kBatchSize, kLearningRate, kHiddenSize, kHiddenLayers, kTrainingRecords, kInputs, kClasses,
      kExperimentSeed);
}

[[noreturn]] void Fail(absl::string_view what, absl::string_view why) {
  std::fprintf(stderr, "trial_loop_bench: %s: %s\n", std::string(what).c_str(),
               std::string(why).c_str());
  std::exit(1);
}

template <class T>
T Must(absl::StatusOr<T> value, absl::string_view what) {
  if (!value.ok()) Fail(what, value.status().message());
  return *std::move(value);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A moment by two clocks: wall time, and the CPU time of the whole process (every thread).
struct Stamp {
  double wall_seconds;
  double cpu_seconds;

  static Stamp Now() {
    timespec cpu{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    const auto wall = std::chrono::steady_clock::now().time_since_epoch();
    return {std::chrono::duration<double>(wall).count(),
            static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) * 1e-9};
  }
};

// Microseconds per batch over a window of batches, by each clock.
struct PerBatch {
  double wall_us;
  double cpu_us;

  static PerBatch Between(const Stamp& start, const Stamp& end, uint64_t batches) {
    const double n = static_cast<double>(batches);
    return {(end.wall_seconds - start.wall_seconds) * 1e6 / n,
            (end.cpu_seconds - start.cpu_seconds) * 1e6 / n};
  }
};

// Times batches (first, first + count] by the StopRequested calls the runner makes after each
// optimizer step (one per batch here), and asks it to stop after the last one.
class WindowEvents final : public cohort::TrialEvents {
 public:
  WindowEvents(uint64_t first, uint64_t count) : first_(first), last_(first + count) {}

  void OnMetrics(const cohort::MetricsReport&) override {}
  void OnProgress(const cohort::ProgressReport&) override {}
  void OnCheckpoint(const cohort::CheckpointReport&) override {}
  bool StopRequested() override {
    ++steps_;
    if (steps_ == first_) start_ = Stamp::Now();
    if (steps_ < last_) return false;
    end_ = Stamp::Now();
    return true;
  }

  PerBatch per_batch() const { return PerBatch::Between(start_, end_, last_ - first_); }

 private:
  uint64_t first_, last_;
  uint64_t steps_ = 0;
  Stamp start_{}, end_{};
};

// The SGD step both peers take: p -= lr * g over a whole block, then g = 0.
void SgdStepAndZero(float* params, float* grads, size_t count) {
  const float learning_rate = static_cast<float>(kLearningRate);
  for (size_t i = 0; i < count; ++i) params[i] -= learning_rate * grads[i];
  std::memset(grads, 0, count * sizeof(float));
}

// 64-byte aligned, zeroed floats, like an arena block; `count` is a multiple of 16.
struct AlignedFloats {
  struct Free {
    void operator()(float* floats) const { std::free(floats); }
  };
  explicit AlignedFloats(size_t count)
      : size(count), data(static_cast<float*>(std::aligned_alloc(64, count * sizeof(float)))) {
    if (data == nullptr) Fail("memory", "aligned_alloc failed");
    std::memset(data.get(), 0, count * sizeof(float));
  }
  size_t size;
  std::unique_ptr<float, Free> data;
};

// A tensor's length rounded up to a 64-byte line of floats, as the arena places tensors.
size_t PaddedLength(size_t floats) { return (floats + 15) / 16 * 16; }

// Peer direct_mlp_sgd_loop: the network and SGD with nothing around them. Parameters and gradients
// are each one aligned block holding the tensors in the plugin's order (layer0.weight, ...).
class DirectMlpTraining {
 public:
  DirectMlpTraining(uint64_t seed, const std::vector<uint64_t>& record_order)
      : data_(COHORT_SPLIT_TRAINING, kTrainingRecords, kInputs, kClasses),
        network_(Widths()),
        order_(record_order),
        params_(BlockLength(network_)),
        grads_(BlockLength(network_)),
        inputs_(kBatchSize * kInputs),
        labels_(kBatchSize) {
    std::vector<mlp::LayerBuffers<float>> writable;
    size_t offset = 0;
    for (size_t l = 0; l < network_.layer_count(); ++l) {
      float* weight = params_.data.get() + offset;
      float* bias = weight + PaddedLength(network_.weight_count(l));
      float* weight_grad = grads_.data.get() + offset;
      float* bias_grad = weight_grad + PaddedLength(network_.weight_count(l));
      writable.push_back({weight, bias});
      params_view_.push_back({weight, bias});
      grads_view_.push_back({weight_grad, bias_grad});
      tensors_.push_back({weight, network_.weight_count(l)});
      tensors_.push_back({bias, network_.fan_out(l)});
      offset += PaddedLength(network_.weight_count(l)) + PaddedLength(network_.fan_out(l));
    }
    network_.Initialize(seed, writable);
  }

  // Trains training batch `batch` of the first epoch, then steps.
  void TrainBatch(uint64_t batch) {
    const uint64_t* records = order_.data() + batch * kBatchSize;
    for (uint64_t i = 0; i < kBatchSize; ++i) {
      labels_[i] = data_.Read(records[i], inputs_.data() + i * kInputs);
    }
    network_.Train(params_view_, grads_view_, inputs_.data(), labels_.data(), kBatchSize, {});
    SgdStepAndZero(params_.data.get(), grads_.data.get(), params_.size);
  }

  // Every parameter tensor, in the plugin's registration order.
  const std::vector<std::span<const float>>& tensors() const { return tensors_; }

 private:
  static std::vector<size_t> Widths() {
    std::vector<size_t> widths{kInputs};
    widths.insert(widths.end(), kHiddenLayers, kHiddenSize);
    widths.push_back(kClasses);
    return widths;
  }
  static size_t BlockLength(const mlp::MlpNetwork& network) {
    size_t length = 0;
    for (size_t l = 0; l < network.layer_count(); ++l) {
      length += PaddedLength(network.weight_count(l)) + PaddedLength(network.fan_out(l));
    }
    return length;
  }

  mlp::SyntheticDataset data_;
  mlp::MlpNetwork network_;
  const std::vector<uint64_t>& order_;  // record indices of the first epoch, in training order
  AlignedFloats params_;
  AlignedFloats grads_;
  std::vector<mlp::LayerParams> params_view_;
  std::vector<mlp::LayerGrads> grads_view_;
  std::vector<std::span<const float>> tensors_;
  std::vector<float> inputs_;
  std::vector<int32_t> labels_;
};

// Peer plugin_call_sgd_loop: a second model of the same plugin, created and trained through the
// plugin's C ABI table with a bare host (only what the ABI requires), its arena stepped by hand.
class PluginCallTraining {
 public:
  PluginCallTraining(const cohort::PluginLibrary& plugin, cohort::ModelHostOptions options,
                     const std::vector<uint64_t>& record_order)
      : api_(plugin.api()), host_(std::move(options)), order_(record_order) {
    const cohort_model_create_args args{COHORT_STRUCT_SIZE(cohort_model_create_args, host),
                                        cohort::HostApi(), &host_};
    if (cohort_error* error = api_.model_create(&args, &model_)) {
      Fail("plugin model_create", cohort::TakeError(error).message());
    }
    host_.phase = cohort::ModelPhase::kTraining;  // gradients_ready is legal from here on
    if (host_.arena == nullptr || host_.arena->blocks().size() != 1 ||
        host_.arena->blocks().front().dtype != COHORT_DTYPE_FLOAT32) {
      Fail("plugin", "expected one float32 block of tensors");
    }
    const cohort::ArenaBlock& block = host_.arena->blocks().front();
    params_ = static_cast<float*>(block.data);
    grads_ = static_cast<float*>(block.grad);
    count_ = block.element_count;
  }
  ~PluginCallTraining() { api_.model_destroy(model_); }
  PluginCallTraining(const PluginCallTraining&) = delete;
  PluginCallTraining& operator=(const PluginCallTraining&) = delete;

  // Trains training batch `batch` of the first epoch, then steps.
  void TrainBatch(uint64_t batch) {
    const cohort_batch spec{COHORT_STRUCT_SIZE(cohort_batch, record_count),
                            COHORT_SPLIT_TRAINING,
                            batch,
                            0,
                            order_.data() + batch * kBatchSize,
                            kBatchSize};
    metrics_.batch.metrics.clear();
    if (cohort_error* error = api_.train_batch(model_, &spec, &metrics_)) {
      Fail("plugin train_batch", cohort::TakeError(error).message());
    }
    SgdStepAndZero(params_, grads_, count_);
  }

  const cohort::TensorArena& arena() const { return *host_.arena; }

 private:
  const cohort_plugin_api& api_;
  cohort_host host_;
  const std::vector<uint64_t>& order_;
  cohort_model* model_ = nullptr;
  cohort_metrics metrics_;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  size_t count_ = 0;
};

// Every tensor of a float32 arena, in registration order.
std::vector<std::span<const float>> ArenaTensors(const cohort::TensorArena& arena) {
  std::vector<std::span<const float>> tensors;
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    tensors.push_back({static_cast<const float*>(arena.data(t)), arena.spec(t).element_count});
  }
  return tensors;
}

// Fails unless the model's parameters equal the peer's bit for bit.
void CheckSameParameters(const cohort::TensorArena& arena,
                         const std::vector<std::span<const float>>& peer, absl::string_view name) {
  if (arena.tensor_count() != peer.size()) {
    Fail(name, absl::StrFormat("the plugin registered %d tensors, the peer has %d",
                               arena.tensor_count(), peer.size()));
  }
  const std::vector<std::span<const float>> model = ArenaTensors(arena);
  for (size_t t = 0; t < peer.size(); ++t) {
    if (arena.spec(t).dtype != COHORT_DTYPE_FLOAT32 || model[t].size() != peer[t].size() ||
        std::memcmp(model[t].data(), peer[t].data(), peer[t].size_bytes()) != 0) {
      Fail(name, absl::StrFormat("tensor %s differs from the peer's after the same batches: "
                                 "the two no longer do the same work",
                                 arena.spec(t).name));
    }
  }
}

// A fresh folder under the system's temporary folder, removed with its contents at the end.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::error_code error;
    std::string pattern =
        (std::filesystem::temp_directory_path(error) / "cohort-trial-loop-bench-XXXXXX").string();
    if (error || ::mkdtemp(pattern.data()) == nullptr) Fail("temporary folder", pattern);
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The per-batch times of one round of every side.
struct RoundTimes {
  PerBatch runner, direct, plugin_call;
};

// Measures `rounds` rounds of `window` batches per side in this process.
std::vector<RoundTimes> MeasureRounds(const char* plugin_path, size_t rounds, uint64_t window) {
  const cohort::ExperimentConfig config =
      Must(cohort::ParseExperimentConfig(ConfigYaml()), "config");
  const uint64_t trial_seed = cohort::TrialSeed(*config.experiment_seed, kTrialId);
  const std::shared_ptr<const cohort::PluginLibrary> plugin =
      Must(cohort::PluginLibrary::Open(plugin_path), "plugin");
  cohort::DefaultMemoryProvider memory;
  cohort::ModelHostOptions host;
  host.context.global_batch_size = config.global_batch_size;
  host.context.per_slot_batch_size = config.global_batch_size;
  host.context.trial_seed = trial_seed;
  host.context.trial_id = kTrialId;
  host.hyperparameters = config.hyperparameters;
  host.memory = &memory;
  const std::unique_ptr<cohort::LoadedModel> model =
      Must(cohort::LoadedModel::Create(plugin, host), "model");
  const cohort::OptimizerOptions sgd =
      Must(cohort::OptimizerOptionsFromHyperparameters(config.hyperparameters), "optimizer");
  const std::unique_ptr<cohort::Optimizer> optimizer =
      Must(cohort::Optimizer::Create(sgd, model->arena()), "optimizer");
  static const TemporaryFolder checkpoints;  // static: removed on every exit, Fail's included
  const std::unique_ptr<cohort::CheckpointStorage> storage =
      Must(cohort::OpenSharedFsStorage(checkpoints.path()), "checkpoint storage");

  const std::vector<uint64_t> order = cohort::ShuffledIndices(kTrainingRecords, trial_seed, 0);
  DirectMlpTraining direct(trial_seed, order);
  PluginCallTraining plugin_call(*plugin, host, order);
  auto check_same_parameters = [&] {
    CheckSameParameters(model->arena(), direct.tensors(), "direct_mlp_sgd_loop");
    CheckSameParameters(model->arena(), ArenaTensors(plugin_call.arena()), "plugin_call_sgd_loop");
  };
  check_same_parameters();

  // Each side restarts at batch 0 and trains the warm-up batches, then the timed window.
  auto runner_round = [&] {
    WindowEvents events(kWarmupBatches, window);
    cohort::TrialRunnerOptions options;
    options.config = &config;
    options.trial_id = kTrialId;
    options.trial_seed = trial_seed;
    options.model = model.get();
    options.optimizer = optimizer.get();
    options.storage = storage.get();
    options.events = &events;
    const std::unique_ptr<cohort::TrialRunner> runner =
        Must(cohort::TrialRunner::Create(options), "runner");
    if (Must(runner->Run(), "trial") != cohort::TrialExit::kStopped) Fail("trial", "did not stop");
    return events.per_batch();
  };
  auto peer_round = [&](auto& peer) {
    for (uint64_t b = 0; b < kWarmupBatches; ++b) peer.TrainBatch(b);
    const Stamp start = Stamp::Now();
    for (uint64_t b = kWarmupBatches; b < kWarmupBatches + window; ++b) peer.TrainBatch(b);
    return PerBatch::Between(start, Stamp::Now(), window);
  };
  const std::vector<std::function<void(RoundTimes&)>> sides = {
      [&](RoundTimes& times) { times.runner = runner_round(); },
      [&](RoundTimes& times) { times.direct = peer_round(direct); },
      [&](RoundTimes& times) { times.plugin_call = peer_round(plugin_call); },
  };

  // An untimed round first, which also shows the sides compute the same parameters.
  RoundTimes untimed;
  for (const auto& side : sides) side(untimed);
  check_same_parameters();
  std::vector<RoundTimes> times(rounds);
  for (size_t r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < sides.size(); ++k) sides[(r + k) % sides.size()](times[r]);
  }
  check_same_parameters();
  return times;
}

// Runs `rounds` rounds in a fresh process of this program (so with a fresh layout in memory) and
// reads them back.
std::vector<RoundTimes> MeasureRoundsInChild(const char* plugin_path, size_t rounds,
                                             uint64_t window) {
  auto quoted = [](const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) Fail("/proc/self/exe", error.message());
  const std::string command = absl::StrFormat("%s %s %s %d %d", quoted(self.string()), kChildFlag,
                                              quoted(plugin_path), rounds, window);
  FILE* child = ::popen(command.c_str(), "r");
  if (child == nullptr) Fail("child process", command);
  std::vector<RoundTimes> times;
  RoundTimes t;
  while (std::fscanf(child, "%lf %lf %lf %lf %lf %lf", &t.runner.cpu_us, &t.runner.wall_us,
                     &t.direct.cpu_us, &t.direct.wall_us, &t.plugin_call.cpu_us,
                     &t.plugin_call.wall_us) == 6) {
    times.push_back(t);
  }
  const int status = ::pclose(child);
  if (status != 0 || times.size() != rounds) Fail("child process", "failed (see above)");
  return times;
}

// One JSON line: the medians over every round of one clock's readings of the runner and a peer.
void Report(const char* name, const std::vector<RoundTimes>& rounds, const char* peer_name,
            PerBatch RoundTimes::*peer, double PerBatch::*clock) {
  std::vector<double> runner_values, peer_values;
  for (const RoundTimes& round : rounds) {
    runner_values.push_back(round.runner.*clock);
    peer_values.push_back((round.*peer).*clock);
  }
  const double value = Median(std::move(runner_values));
  const double peer_value = Median(std::move(peer_values));
  std::printf(
      "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"us\", \"peer\": \"%s\", "
      "\"peer_value\": %.3f, \"ratio\": %.4f}\n",
      name, value, peer_name, peer_value, value / peer_value);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], kChildFlag) == 0) {
    const size_t rounds = std::strtoul(argv[3], nullptr, 10);
    const uint64_t window = std::strtoull(argv[4], nullptr, 10);
    for (const RoundTimes& t : MeasureRounds(argv[2], rounds, window)) {
      std::printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", t.runner.cpu_us, t.runner.wall_us,
                  t.direct.cpu_us, t.direct.wall_us, t.plugin_call.cpu_us, t.plugin_call.wall_us);
    }
    return 0;
  }
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr, "usage: %s MLP_PLUGIN_PATH [PROCESSES] [ROUNDS] [BATCHES]\n", argv[0]);
    return 2;
  }
  const long processes = argc > 2 ? std::atol(argv[2]) : 5;
  const long rounds = argc > 3 ? std::atol(argv[3]) : 6;
  const long batches = argc > 4 ? std::atol(argv[4]) : 600;
  if (processes < 1 || rounds < 1 || batches < 1 ||
      kWarmupBatches + static_cast<uint64_t>(batches) > kBatchesPerEpoch) {
    Fail("arguments", absl::StrFormat("need PROCESSES >= 1, ROUNDS >= 1 and 1 <= BATCHES <= %d",
                                      kBatchesPerEpoch - kWarmupBatches));
  }

  std::vector<RoundTimes> rounds_of_all;
  for (long p = 0; p < processes; ++p) {
    for (const RoundTimes& t : MeasureRoundsInChild(argv[1], static_cast<size_t>(rounds),
                                                    static_cast<uint64_t>(batches))) {
      rounds_of_all.push_back(t);
    }
  }
  Report("trial_loop_per_batch", rounds_of_all, "direct_mlp_sgd_loop", &RoundTimes::direct,
         &PerBatch::cpu_us);
  Report("trial_loop_wall_per_batch", rounds_of_all, "direct_mlp_sgd_loop", &RoundTimes::direct,
         &PerBatch::wall_us);
  Report("trial_loop_over_plugin_call_per_batch", rounds_of_all, "plugin_call_sgd_loop",
         &RoundTimes::plugin_call, &PerBatch::cpu_us);
  return 0;
}
