#include "runtime/config/internal/yaml_bounds.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {
namespace {

// Visits a node and what it holds, depth first, and stops at the first node past a bound.
class BoundsWalk {
 public:
  absl::Status Visit(const YAML::Node& node, uint32_t depth) {
    if (++nodes_ > kMaxConfigNodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("the config holds more than ", kMaxConfigNodes,
                       " YAML nodes once its aliases are expanded, the most Cohort reads"));
    }
    if (depth > kMaxConfigDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the config nests deeper than ", kMaxConfigDepth, " levels, the most Cohort reads"));
    }
    if (node.IsScalar()) {
      // A NUL ("\0" in a quoted string) would cut the value short wherever it is used as text.
      if (node.Scalar().find('\0') != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", node.Mark().line + 1,
                         ": a value holds a NUL character, which Cohort does "
                         "not accept in a config"));
      }
    } else if (node.IsSequence()) {
      for (const YAML::Node& item : node) {
        if (absl::Status s = Visit(item, depth + 1); !s.ok()) return s;
      }
    } else if (node.IsMap()) {
      for (const auto& entry : node) {
        if (absl::Status s = Visit(entry.first, depth + 1); !s.ok()) return s;
        if (absl::Status s = Visit(entry.second, depth + 1); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  uint64_t nodes_ = 0;
};

}  // namespace

absl::Status CheckYamlBounds(const YAML::Node& root) { return BoundsWalk().Visit(root, 0); }

}  // namespace cohort::config_internal
