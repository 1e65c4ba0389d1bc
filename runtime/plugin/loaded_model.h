// LoadedModel: one model created by a plugin, driven through the C ABI with absl::Status errors.
//
//   auto plugin = PluginLibrary::Open(path);
//   ModelHostOptions options;  // trial context, hyperparameters, memory provider
//   auto model = LoadedModel::Create(*plugin, std::move(options));
//   auto metrics = (*model)->TrainBatch(batch);   // gradients added into (*model)->arena()
//
// Every error is prefixed with the plugin name and the call that failed, e.g.
// "plugin mlp: train_batch (batch_index 7): hyperparameter 'lr' is not set; ...". The host also
// checks the plugin kept its side of the contract: model_create registered tensors and set the
// model, train_batch reported "loss".
//
// Thread-safety: not thread-safe; one caller at a time (plugin.h promises the plugin as much).
#ifndef COHORT_RUNTIME_PLUGIN_LOADED_MODEL_H_
#define COHORT_RUNTIME_PLUGIN_LOADED_MODEL_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/plugin/batch_metrics.h"
#include "runtime/plugin/model_host.h"
#include "runtime/plugin/plugin_library.h"

namespace cohort {

// A batch as the sampler chose it.
struct BatchSpec {
  cohort_split split = COHORT_SPLIT_TRAINING;
  uint64_t batch_index = 0;
  uint64_t epoch = 0;
  std::vector<uint64_t> record_indices;
};

class LoadedModel {
 public:
  static absl::StatusOr<std::unique_ptr<LoadedModel>> Create(
      std::shared_ptr<const PluginLibrary> plugin, ModelHostOptions options);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const PluginLibrary& plugin() const { return *plugin_; }
  // The parameters (with their gradients), and the state tensors (SDK 1.4: no gradients, never
  // exchanged or stepped; nullptr when the model registered none).
  TensorArena& arena() { return *host_->arena; }
  TensorArena* state_arena() { return host_->state.get(); }
  const cohort_trial_context& context() const { return host_->options.context; }
  // The hyperparameters the plugin has asked for so far (by name, whether set or not).
  std::set<std::string> HyperparametersRead() const;

  absl::StatusOr<uint64_t> DatasetSize(cohort_split split);
  // Adds the batch's gradients into arena() (zeroing them is the caller's job). A metric the
  // plugin added with metric_add_device may still be on the device (BatchMetrics::unsettled).
  absl::StatusOr<BatchMetrics> TrainBatch(const BatchSpec& batch);
  absl::StatusOr<BatchMetrics> EvaluateBatch(const BatchSpec& batch);
  // Reads every metric value still on the device into `batches`, waiting once. `batches` must hold
  // every unsettled batch since the previous Settle (the device's values are taken all at once);
  // INTERNAL when they do not match what was captured.
  absl::Status Settle(std::vector<BatchMetrics>& batches);

  bool has_optimizer() const { return plugin_->has_optimizer(); }
  // FAILED_PRECONDITION when the plugin has no optimizer_step.
  absl::Status OptimizerStep(uint64_t step, uint64_t batches_trained);

  bool has_state() const { return plugin_->has_state(); }
  // The plugin's extra state (empty when it keeps none).
  absl::StatusOr<std::string> SaveState();
  // Restores what SaveState returned; the plugin must consume every byte.
  absl::Status LoadState(absl::string_view bytes);

 private:
  LoadedModel(std::shared_ptr<const PluginLibrary> plugin, std::unique_ptr<ModelHost> host)
      : plugin_(std::move(plugin)), host_(std::move(host)) {}

  // Runs one plugin call in `phase`, turning its error into a Status prefixed with what() (only
  // called on failure, so the per-batch path builds no strings).
  template <class Describe, class Call>
  absl::Status Invoke(ModelPhase phase, Describe&& what, Call&& call);
  absl::StatusOr<BatchMetrics> RunBatch(const BatchSpec& batch, bool training);

  std::shared_ptr<const PluginLibrary> plugin_;  // keeps the code loaded while the model lives
  std::unique_ptr<ModelHost> host_;              // stable address: the plugin holds it
  cohort_model* model_ = nullptr;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_LOADED_MODEL_H_
