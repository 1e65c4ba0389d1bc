#include "runtime/config/hyperparameter_assignment.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort {
namespace {

// `value` under `name`: a map without a `type` key is a group, as in the config, each of its
// keys set as `name.key`; anything else is one value (null an Other holding `~`).
void SetValue(const std::string& name, const YAML::Node& value, Hyperparameters& hyperparameters) {
  if (value.IsMap() && !value["type"]) {
    for (const auto& entry : value) {
      SetValue(absl::StrCat(name, ".", entry.first.Scalar()), entry.second, hyperparameters);
    }
    return;
  }
  hyperparameters.Set(name, config_internal::ToHyperparameterValue(value));
}

}  // namespace

absl::Status SetHyperparameterFromAssignment(absl::string_view assignment,
                                             Hyperparameters& hyperparameters) {
  const size_t eq = assignment.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected NAME=VALUE, got '", assignment, "'"));
  }
  YAML::Node value;
  try {
    value = YAML::Load(std::string(assignment.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", assignment, "': the value is not valid YAML: ", e.msg));
  }
  SetValue(std::string(assignment.substr(0, eq)), value, hyperparameters);
  return absl::OkStatus();
}

}  // namespace cohort
