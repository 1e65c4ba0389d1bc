// Command-line overrides of an experiment config: `--set dotted.path=value`.
//
// The value is read as YAML (a scalar or a flow collection), so `lr=0.1` is a number, `lr='0.1'`
// a string and `layers=[64, 32]` a list; an empty value is null (the field's default). Keys along
// the path are created as needed. Setting one unit of a length (batches, records or epochs, as in
// searcher.max_length, min_validation_period, min_checkpoint_period) replaces the whole length,
// whichever unit it was counted in:
//
//   ApplyOverride("searcher.max_length.batches=500", root);  // {epochs: 10} -> {batches: 500}
//   ApplyOverride("hyperparameters.lr=0.1", root);   // replaces a search space with a constant
//
// Thread-safety: mutates `root`; one caller at a time.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_OVERRIDES_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_OVERRIDES_H_

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort::config_internal {

// INVALID_ARGUMENT, quoting the assignment, for: no '=', an empty key in the path, a value that is
// not YAML, or a path that runs through a value that is not a map.
absl::Status ApplyOverride(absl::string_view assignment, YAML::Node& root);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_OVERRIDES_H_
