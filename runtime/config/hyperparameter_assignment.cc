#include "runtime/config/hyperparameter_assignment.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/internal/hyperparameter_reader.h"

namespace cohort {

absl::Status SetHyperparameterFromAssignment(absl::string_view assignment,
                                             Hyperparameters& hyperparameters) {
  const size_t eq = assignment.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected NAME=VALUE, got '", assignment, "'"));
  }
  YAML::Node section(YAML::NodeType::Map);
  try {
    section[std::string(assignment.substr(0, eq))] =
        YAML::Load(std::string(assignment.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", assignment, "': the value is not valid YAML: ", e.msg));
  }
  // Read as the config's `hyperparameters:` section is: groups flattened, each value what the
  // single searcher's trial sees.
  absl::StatusOr<std::map<std::string, HyperparameterSpace>> spaces =
      config_internal::ReadHyperparameterSpaces(section);
  if (!spaces.ok()) return spaces.status();
  for (const auto& [name, space] : *spaces) hyperparameters.Set(name, SingleSearcherChoice(space));
  return absl::OkStatus();
}

}  // namespace cohort
