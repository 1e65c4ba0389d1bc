#include "runtime/config/hyperparameter_assignment.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort {

absl::Status SetHyperparameterFromAssignment(absl::string_view assignment,
                                             Hyperparameters& hyperparameters) {
  const size_t eq = assignment.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected NAME=VALUE, got '", assignment, "'"));
  }
  std::string name(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  if (text.empty()) {
    hyperparameters.Set(std::move(name), std::string());
    return absl::OkStatus();
  }
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", assignment, "': the value is not valid YAML: ", e.msg));
  }
  hyperparameters.Set(std::move(name), config_internal::ToHyperparameterValue(value));
  return absl::OkStatus();
}

}  // namespace cohort
