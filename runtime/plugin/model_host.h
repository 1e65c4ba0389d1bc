// ModelHost: everything the runtime keeps for one plugin model, and the object behind the SDK's
// opaque cohort_host handle that every host service receives.
//
// The runtime fills a ModelHost before model_create (trial context, hyperparameters, where
// tensor memory comes from, where logs go); register_tensors fills its arena. The phase guards
// the services that are only legal inside certain calls (register_tensors during model_create,
// gradients_ready during train_batch).
#ifndef COHORT_RUNTIME_PLUGIN_MODEL_HOST_H_
#define COHORT_RUNTIME_PLUGIN_MODEL_HOST_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/plugin/device_value_reader.h"
#include "runtime/plugin/hyperparameters.h"
#include "runtime/plugin/ready_ranges.h"

namespace cohort {

// Receives plugin log lines. Must be safe to call from any thread.
using LogSink = std::function<void(cohort_log_level level, absl::string_view message)>;

// Told when a gradient range is final during train_batch (the exchange hooks in here). Since SDK
// 1.2 the plugin may call gradients_ready from any thread, so the hook must be thread-safe.
using GradientsReadyHook = std::function<void(uint32_t tensor, uint64_t offset, uint64_t count)>;

// A one-slot trial on the CPU: rank 0 of 1 everywhere, batch size 1, seed 0.
cohort_trial_context SingleSlotCpuContext();

// What the runtime knows about a model before creating it.
struct ModelHostOptions {
  cohort_trial_context context = SingleSlotCpuContext();  // struct_size is set by the host
  Hyperparameters hyperparameters;
  DeviceMemoryProvider* memory = nullptr;  // required; outlives the model
  LogSink log;                             // default: stderr, prefixed with the rank
  GradientsReadyHook on_gradients_ready;   // default: none
  // Takes metric_add_device values without waiting (on a GPU, the CUDA exchange module's);
  // nullptr: such a value is read at once through `memory`. Outlives the model.
  DeviceValueReader* device_values = nullptr;
};

enum class ModelPhase { kCreating, kIdle, kTraining, kEvaluating, kStepping, kSaving, kLoading };

// Where the plugin's tensor i (register_tensors order) lives: its index in the parameter arena or
// in the state arena.
struct RegisteredTensor {
  bool state = false;
  uint32_t index = 0;
};

}  // namespace cohort

struct cohort_host {
  explicit cohort_host(cohort::ModelHostOptions options);

  cohort::ModelHostOptions options;
  // Atomic: gradients_ready reads it from whatever thread the plugin calls it on (SDK 1.2).
  std::atomic<cohort::ModelPhase> phase{cohort::ModelPhase::kCreating};
  // The ABI minor of the plugin's headers (its table's abi_version), which says how far apart
  // the elements of the arrays it passes lie; LoadedModel sets it before model_create.
  uint32_t plugin_minor = COHORT_ABI_VERSION_MINOR;
  std::unique_ptr<cohort::TensorArena> arena;  // the parameters, set once by register_tensors
  std::unique_ptr<cohort::TensorArena> state;  // the state tensors (SDK 1.4); nullptr when none
  std::vector<cohort::RegisteredTensor> registered;  // the plugin's indices
  // The hyperparameters the plugin asked for (hparam_type and the hparam_* getters, present or
  // not), from any thread.
  std::mutex hyperparameters_read_mutex;
  std::set<std::string> hyperparameters_read;
  // hparam_text's answers, kept for the model's lifetime (under hyperparameters_read_mutex).
  std::map<std::string, std::string, std::less<>> hyperparameter_texts;

  // gradients_ready's record of the batch, from any thread: the ranges reported final since
  // train_batch began (set up by register_tensors), and the first report refused since then, or
  // since the previous train_batch began for one that came between them. A refused report fails
  // the batch even when the plugin goes on (TakeReadyBreach), at one slot as at many.
  void BeginTrainingBatch();
  // Keeps `refused` unless a report was refused before it.
  void NoteReadyBreach(absl::Status refused);
  // The first report refused (OK when none), forgotten from here.
  absl::Status TakeReadyBreach();
  std::mutex ready_mutex;
  std::unique_ptr<cohort::ReadyRanges> ready;  // guarded by ready_mutex
  absl::Status ready_breach;                   // guarded by ready_mutex
};

namespace cohort {
using ModelHost = cohort_host;

// A LogSink writing "LEVEL: message" lines to stderr, every line of a message of several with
// its level, a NUL as \0 (the agent that captures a worker's stderr puts "[rank R] " before
// each line of it).
LogSink StderrLogSink();

// "debug", "info", "warning", "error".
absl::string_view LogLevelName(cohort_log_level level);
}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_MODEL_HOST_H_
