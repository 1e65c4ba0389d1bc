// Reads the `hyperparameters:` section into search spaces keyed by flattened, dotted names.
//
//   hyperparameters:
//     global_batch_size: 64                    -> "global_batch_size": kConst 64
//     lr: {type: log, minval: -4, maxval: -1}  -> "lr": kLog, base 10
//     optimizer:                               (a map without `type` is a group)
//       momentum: {type: double, minval: 0.8, maxval: 0.99}  -> "optimizer.momentum": kDouble
//     layers: [64, 32]                         -> "layers": kConst Other("[64, 32]")
//
// Errors name the field, e.g. "hyperparameters.lr.minval: expected a number; got 'small'".
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_HYPERPARAMETER_READER_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_HYPERPARAMETER_READER_H_

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {

// `section` is the value of `hyperparameters` (absent or null: no hyperparameters). A name that
// appears twice after flattening (`a.b: 1` beside `a: {b: 2}`) is an error.
absl::StatusOr<std::map<std::string, HyperparameterSpace>> ReadHyperparameterSpaces(
    const YAML::Node& section);

// Determined's rule for the grid searcher: every int, double and log space gives `count`. The
// error names the first space without one ("hyperparameters.lr.count: expected ...; got nothing").
absl::Status CheckGridCounts(const std::map<std::string, HyperparameterSpace>& spaces);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_HYPERPARAMETER_READER_H_
