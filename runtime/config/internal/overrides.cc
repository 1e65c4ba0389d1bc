#include "runtime/config/internal/overrides.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {
namespace {

absl::Status BadOverride(absl::string_view assignment, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("--set '", assignment, "': ", problem));
}

}  // namespace

absl::Status ApplyOverride(absl::string_view assignment, YAML::Node& root) {
  const size_t eq = assignment.find('=');
  if (eq == absl::string_view::npos) {
    return BadOverride(assignment, "expected PATH=VALUE, e.g. searcher.max_length.batches=500");
  }
  const std::vector<std::string> keys = absl::StrSplit(assignment.substr(0, eq), '.');
  for (const std::string& key : keys) {
    if (key.empty()) {
      return BadOverride(assignment,
                         "expected a dotted path of non-empty keys before '=', e.g. "
                         "hyperparameters.lr=0.1");
    }
  }
  YAML::Node value;
  try {
    value = YAML::Load(std::string(assignment.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    return BadOverride(assignment, absl::StrCat("the value is not valid YAML: ", e.msg));
  }

  YAML::Node map;
  map.reset(root);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node child = map[keys[i]];
    if (IsAbsent(child)) {
      child = YAML::Node(YAML::NodeType::Map);
    } else if (!child.IsMap()) {
      const std::string path = absl::StrJoin(keys.begin(), keys.begin() + i + 1, ".");
      return BadOverride(assignment, absl::StrCat("cannot set a key inside ", path, ": it is ",
                                                  DescribeNode(child), ", not a map"));
    }
    map.reset(child);
  }
  map[keys.back()] = value;
  return absl::OkStatus();
}

}  // namespace cohort::config_internal
