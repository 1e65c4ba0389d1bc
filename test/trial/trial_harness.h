// TrialHarness: one trial assembled from real parts for the trial tests: a plugin model (linreg,
// mlp or c_quadratic from the build's plugins/), the built-in optimizer its hyperparameters name,
// shared_fs checkpoint storage in a given folder, a manual clock and events that record what the
// runner reports. Also a self-removing temporary folder and configs small enough to run in
// milliseconds.
//
//   TempFolder folder;
//   auto trial = TrialHarness::Create("linreg/linreg.so", LinregConfig(), folder.path());
//   absl::StatusOr<TrialExit> exit = (*trial)->runner().Run();
//   (*trial)->events().timeline;   // {"training@5", "validation@10", "checkpoint@10", ...}
//
// Thread-safety: single-threaded, like the runner.
#ifndef COHORT_TEST_TRIAL_TRIAL_HARNESS_H_
#define COHORT_TEST_TRIAL_TRIAL_HARNESS_H_

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/arena/device_memory.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/config/optimizer_hyperparameters.h"
#include "runtime/optim/device_update_kernels.h"
#include "runtime/trial/trial_runner.h"
#include "test/common/host_memory_as_device.h"
#include "test/common/manual_clock.h"
#include "test/common/temp_folder.h"
#include "test/unit/test_plugins.h"

namespace cohort::trial_test {

using ::cohort::ManualClock;

// Records every event. StopRequested (asked after every optimizer step) moves `clock` on by
// `seconds_per_step` and answers true once the runner has trained `stop_after_batches` batches;
// a validation report, sent while the runner validates, moves it on by `seconds_per_validation`.
class RecordingEvents final : public TrialEvents {
 public:
  void OnMetrics(const MetricsReport& report) override {
    if (clock != nullptr && report.kind == ReportKind::kValidation) {
      clock->now += seconds_per_validation;
    }
    metrics.push_back(report);
    timeline.push_back(absl::StrCat(
        report.kind == ReportKind::kTraining ? "training@" : "validation@", report.batches));
  }
  void OnProgress(const ProgressReport& report) override { progress.push_back(report); }
  void OnNotice(const std::string& line) override { notices.push_back(line); }
  void OnCheckpoint(const CheckpointReport& report) override {
    checkpoints.push_back(report);
    timeline.push_back(absl::StrCat("checkpoint@", report.batches));
  }
  void StillWorking() override { ++still_working; }
  bool StopRequested() override {
    if (clock != nullptr) clock->now += seconds_per_step;
    const uint64_t batches = runner == nullptr ? 0 : runner->batches_trained();
    if (after_step) after_step(batches);
    stop_asked_at.push_back(batches);
    return batches >= stop_after_batches;
  }

  // The reports of one kind, in order.
  std::vector<MetricsReport> Reports(ReportKind kind) const {
    std::vector<MetricsReport> selected;
    for (const MetricsReport& report : metrics) {
      if (report.kind == kind) selected.push_back(report);
    }
    return selected;
  }

  const TrialRunner* runner = nullptr;
  ManualClock* clock = nullptr;
  double seconds_per_step = 0;
  double seconds_per_validation = 0;
  uint64_t stop_after_batches = UINT64_MAX;
  // Called with the batches trained at each StopRequested, on the runner's thread.
  std::function<void(uint64_t batches)> after_step;
  std::vector<MetricsReport> metrics;
  std::vector<ProgressReport> progress;
  std::vector<CheckpointReport> checkpoints;
  std::vector<std::string> timeline;  // "training@5", "validation@10", "checkpoint@10"
  std::vector<std::string> notices;
  std::vector<uint64_t> stop_asked_at;  // batches trained at each StopRequested
  uint64_t still_working = 0;           // StillWorking calls
};

inline Length Batches(uint64_t n) { return {LengthUnit::kBatches, n}; }

// Where a trial puts the plugin's tensors instead of the CPU: "cuda:0" memory that is host memory
// (HostMemoryAsDevice), stepped by the device optimizer over `kernels`. Both must outlive the
// trial.
struct PosedDevice {
  testing::HostMemoryAsDevice* memory = nullptr;
  DeviceUpdateKernels* kernels = nullptr;
};

inline constexpr char kLinregPlugin[] = "linreg/linreg.so";
inline constexpr char kMlpPlugin[] = "mlp/mlp.so";
inline constexpr uint64_t kTrialSeed = 1234;

// The metric `name` of `report`, or nullptr.
inline const NamedValue* FindNamed(const MetricsReport& report, const std::string& name) {
  for (const NamedValue& metric : report.metrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

// linreg with 3 features, 40 training and 12 validation records, random initial weights, SGD with
// momentum; batches of 8, 20 batches, training reports every 5. Checkpoints only where periods
// and the end put them (checkpoint_policy "none"), so tests of the schedule need not predict
// which validation is the best; written before training goes on (checkpoint_storage.async false),
// so each is reported where it is taken.
inline ExperimentConfig LinregConfig() {
  ExperimentConfig config;
  config.name = "linreg-test";
  config.entrypoint = "linreg";
  config.global_batch_size = 8;
  config.searcher.metric = "loss";
  config.searcher.max_length = Batches(20);
  config.scheduling_unit = 5;
  config.checkpoint_policy = CheckpointPolicy::kNone;
  config.checkpoint_storage.async = false;
  Hyperparameters& hp = config.hyperparameters;
  hp.Set("global_batch_size", 8);
  hp.Set("dim", 3);
  hp.Set("train_records", 40);
  hp.Set("validation_records", 12);
  hp.Set("init_scale", 0.5);
  hp.Set("optimizer", "sgd");
  hp.Set("learning_rate", 0.05);
  hp.Set("momentum", 0.9);
  return config;
}

// c_quadratic (one tensor of 3 floats) for `batches` batches of 2, plain SGD at a learning rate
// of 0.25, training reports every 2 batches; checkpoint_policy "none" as above.
inline ExperimentConfig QuadraticConfig(uint64_t batches) {
  ExperimentConfig config;
  config.name = "quadratic-test";
  config.entrypoint = "c_quadratic";
  config.global_batch_size = 2;
  config.searcher.metric = "loss";
  config.searcher.max_length = Batches(batches);
  config.scheduling_unit = 2;
  config.checkpoint_policy = CheckpointPolicy::kNone;
  config.checkpoint_storage.async = false;
  Hyperparameters& hp = config.hyperparameters;
  hp.Set("global_batch_size", 2);
  hp.Set("optimizer", "sgd");
  hp.Set("learning_rate", 0.25);
  return config;
}

// A small MLP on synthetic data (100 training records: epochs do not divide into batches of 16),
// trained with Adam; checkpoint_policy "none" as above.
inline ExperimentConfig MlpConfig() {
  ExperimentConfig config;
  config.name = "mlp-test";
  config.entrypoint = "mlp";
  config.global_batch_size = 16;
  config.searcher.metric = "validation_loss";
  config.searcher.max_length = Batches(24);
  config.scheduling_unit = 4;
  config.checkpoint_policy = CheckpointPolicy::kNone;
  config.checkpoint_storage.async = false;
  Hyperparameters& hp = config.hyperparameters;
  hp.Set("global_batch_size", 16);
  hp.Set("hidden_size", 8);
  hp.Set("hidden_layers", 1);
  hp.Set("synthetic_train_records", 100);
  hp.Set("synthetic_validation_records", 20);
  hp.Set("synthetic_input_dim", 6);
  hp.Set("synthetic_classes", 3);
  hp.Set("optimizer", "adam");
  hp.Set("learning_rate", 0.01);
  return config;
}

class TrialHarness {
 public:
  // Puts a test's storage in front of the shared_fs one (to slow or fail its writes).
  using StorageWrapper =
      std::function<std::unique_ptr<CheckpointStorage>(std::unique_ptr<CheckpointStorage>)>;

  // Loads plugins/`plugin` with the config's hyperparameters on one CPU slot, creates the
  // optimizer they name (none when `builtin_optimizer` is false), opens shared_fs storage at
  // `storage_root` (behind `wrap_storage`'s, when given) and creates the runner. `device_values`
  // takes the plugin's metric_add_device values (nullptr: read at once). With `device`, the slot
  // is that posed GPU.
  static absl::StatusOr<std::unique_ptr<TrialHarness>> Create(
      const std::string& plugin, ExperimentConfig config, const std::string& storage_root,
      uint64_t trial_id = 1, uint64_t trial_seed = 1234, bool builtin_optimizer = true,
      DeviceValueReader* device_values = nullptr, StorageWrapper wrap_storage = nullptr,
      const PosedDevice* device = nullptr) {
    std::unique_ptr<TrialHarness> trial(new TrialHarness(std::move(config)));
    absl::StatusOr<std::shared_ptr<const PluginLibrary>> library =
        PluginLibrary::Open(testing::PluginPath(plugin));
    if (!library.ok()) return library.status();
    ModelHostOptions host;
    host.context.trial_seed = trial_seed;
    host.context.trial_id = trial_id;
    host.context.global_batch_size = trial->config_.global_batch_size;
    host.context.per_slot_batch_size = trial->config_.global_batch_size;
    host.hyperparameters = trial->config_.hyperparameters;
    host.memory = &trial->memory_;
    if (device != nullptr) {
      host.context.device = {COHORT_DEVICE_CUDA, 0};
      host.memory = device->memory;
    }
    host.device_values = device_values;
    absl::StatusOr<std::unique_ptr<LoadedModel>> model =
        LoadedModel::Create(*library, std::move(host));
    if (!model.ok()) return model.status();
    trial->model_ = *std::move(model);
    if (builtin_optimizer) {
      absl::StatusOr<OptimizerOptions> options =
          OptimizerOptionsFromHyperparameters(trial->config_.hyperparameters);
      if (!options.ok()) return options.status();
      absl::StatusOr<std::unique_ptr<Optimizer>> optimizer = Optimizer::Create(
          *options, trial->model_->arena(), device != nullptr ? device->kernels : nullptr);
      if (!optimizer.ok()) return optimizer.status();
      trial->optimizer_ = *std::move(optimizer);
    }
    absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(storage_root);
    if (!storage.ok()) return storage.status();
    trial->storage_ = wrap_storage ? wrap_storage(*std::move(storage)) : *std::move(storage);

    TrialRunnerOptions options;
    options.config = &trial->config_;
    options.trial_id = trial_id;
    options.trial_seed = trial_seed;
    options.model = trial->model_.get();
    options.optimizer = trial->optimizer_.get();
    options.storage = trial->storage_.get();
    options.events = &trial->events_;
    options.clock = &trial->clock_;
    absl::StatusOr<std::unique_ptr<TrialRunner>> runner = TrialRunner::Create(options);
    if (!runner.ok()) return runner.status();
    trial->runner_ = *std::move(runner);
    trial->events_.runner = trial->runner_.get();
    trial->events_.clock = &trial->clock_;
    return trial;
  }

  const ExperimentConfig& config() const { return config_; }
  LoadedModel& model() { return *model_; }
  Optimizer* optimizer() { return optimizer_.get(); }
  CheckpointStorage& storage() { return *storage_; }
  RecordingEvents& events() { return events_; }
  ManualClock& clock() { return clock_; }
  TrialRunner& runner() { return *runner_; }

  // Every arena block's parameter bytes, in block order.
  std::string ParameterBytes() {
    std::string bytes;
    for (const ArenaBlock& block : model_->arena().blocks()) {
      bytes.append(static_cast<const char*>(block.data), block.element_count * block.element_size);
    }
    return bytes;
  }

 private:
  explicit TrialHarness(ExperimentConfig config) : config_(std::move(config)) {}

  ExperimentConfig config_;
  CpuOnlyMemoryProvider memory_;
  // Declared after memory_ and before runner_: destroyed in the order runner, storage, optimizer,
  // model, memory.
  std::unique_ptr<LoadedModel> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<CheckpointStorage> storage_;
  RecordingEvents events_;
  ManualClock clock_;
  std::unique_ptr<TrialRunner> runner_;
};

// Gives each test a fresh storage folder and trials of trial id 1 and seed kTrialSeed in it.
class TrialRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<TrialHarness> Trial(const ExperimentConfig& config,
                                      const std::string& plugin = kLinregPlugin) {
    absl::StatusOr<std::unique_ptr<TrialHarness>> trial =
        TrialHarness::Create(plugin, config, folder_.path(), 1, kTrialSeed);
    EXPECT_TRUE(trial.ok()) << trial.status();
    return trial.ok() ? *std::move(trial) : nullptr;
  }

  TempFolder folder_;
};

}  // namespace cohort::trial_test

#endif  // COHORT_TEST_TRIAL_TRIAL_HARNESS_H_
