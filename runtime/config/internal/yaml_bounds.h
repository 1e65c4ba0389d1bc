// CheckYamlBounds: refuses a parsed config larger than Cohort reads, counting its nodes as the
// readers see them (an alias counts as often as it is used, so a few hundred bytes of aliases
// that expand to millions of nodes are refused here, quickly, instead of exhausting memory), and
// its depth; and a value holding a NUL character. The limits are in experiment_config.h.
//
// Thread-safety: reads the node only.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_YAML_BOUNDS_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_YAML_BOUNDS_H_

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"

namespace cohort::config_internal {

// INVALID_ARGUMENT naming the limit when `root` holds more than kMaxConfigNodes nodes, aliases
// expanded, or nests deeper than kMaxConfigDepth; naming the line of a value with a NUL.
absl::Status CheckYamlBounds(const YAML::Node& root);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_YAML_BOUNDS_H_
