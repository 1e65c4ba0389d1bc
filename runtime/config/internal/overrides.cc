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

// The units a length is counted in (length_reader.h): `{batches: N}`, `{records: N}`,
// `{epochs: N}`, or a bare integer meaning batches.
bool IsLengthUnit(absl::string_view key) {
  return key == "batches" || key == "records" || key == "epochs";
}

// Whether `node` holds a length: a map of length units only, or a bare integer.
bool IsLength(const YAML::Node& node) {
  if (node.IsScalar()) return PlainInt(node).has_value();
  if (!node.IsMap() || node.size() == 0) return false;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || !IsLengthUnit(entry.first.Scalar())) return false;
  }
  return true;
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
    // Setting one unit of a length sets the whole length: `searcher.max_length.batches=500` on
    // `max_length: {epochs: 10}` (or `max_length: 100`) leaves `max_length: {batches: 500}`.
    const bool sets_length = i + 2 == keys.size() && IsLengthUnit(keys.back());
    if (IsAbsent(child) || (sets_length && IsLength(child))) {
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
