#include "runtime/config/internal/yaml_bounds.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {
namespace {

// Visits `node` and what it holds, depth first, until a limit is passed; false then.
bool Within(const YAML::Node& node, uint32_t depth, uint64_t& nodes, uint32_t& deepest) {
  if (++nodes > kMaxConfigNodes) return false;
  if (depth > deepest) deepest = depth;
  if (depth > kMaxConfigDepth) return false;
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) {
      if (!Within(item, depth + 1, nodes, deepest)) return false;
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      if (!Within(entry.first, depth + 1, nodes, deepest) ||
          !Within(entry.second, depth + 1, nodes, deepest)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

absl::Status CheckYamlBounds(const YAML::Node& root) {
  uint64_t nodes = 0;
  uint32_t deepest = 0;
  if (Within(root, 0, nodes, deepest)) return absl::OkStatus();
  if (deepest > kMaxConfigDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the config nests deeper than ", kMaxConfigDepth, " levels, the most Cohort reads"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the config holds more than ", kMaxConfigNodes,
      " YAML nodes once its aliases are expanded, the most Cohort reads"));
}

}  // namespace cohort::config_internal
