// Paths of the plugins built for tests (plugins/test, plugins/mlp, plugins/linreg), and a
// shorthand to create a model from one.
#ifndef COHORT_TEST_UNIT_TEST_PLUGINS_H_
#define COHORT_TEST_UNIT_TEST_PLUGINS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/plugin/loaded_model.h"

namespace cohort::testing {

// COHORT_TEST_PLUGIN_DIR is the build folder's plugins/ (set by test/unit/meson.build).
inline std::string PluginPath(const std::string& relative) {
  return std::string(COHORT_TEST_PLUGIN_DIR) + "/" + relative;
}
inline std::string DefectivePlugin(const std::string& defect) {
  return PluginPath("test/defect_" + defect + ".so");
}

// Loads plugins/`relative` and creates a one-slot CPU model with these hyperparameters.
inline absl::StatusOr<std::unique_ptr<LoadedModel>> CreateModel(const std::string& relative,
                                                                Hyperparameters hyperparameters,
                                                                DeviceMemoryProvider& memory,
                                                                uint64_t trial_seed = 0) {
  auto plugin = PluginLibrary::Open(PluginPath(relative));
  if (!plugin.ok()) return plugin.status();
  ModelHostOptions options;
  options.context.trial_seed = trial_seed;
  options.hyperparameters = std::move(hyperparameters);
  options.memory = &memory;
  return LoadedModel::Create(*plugin, std::move(options));
}

// A training batch of these records.
inline BatchSpec TrainingBatch(std::vector<uint64_t> records) {
  BatchSpec batch;
  batch.record_indices = std::move(records);
  return batch;
}

}  // namespace cohort::testing

#endif  // COHORT_TEST_UNIT_TEST_PLUGINS_H_
