#include "runtime/config/optimizer_hyperparameters.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/text/closest_name.h"

namespace cohort {
namespace {

using OptimizerKind = OptimizerOptions::Kind;

constexpr std::array<OptimizerKind, 3> kKinds = {OptimizerKind::kSgd, OptimizerKind::kAdam,
                                                 OptimizerKind::kAdamW};

// Whether `name` is given: set, and not to null (which means its default, as if left out).
bool Given(const Hyperparameters& hp, absl::string_view name) {
  return hp.TypeOf(name) != COHORT_HPARAM_ABSENT && !hp.IsNull(name);
}

// The value of an optional double hyperparameter, or `fallback` when it is not given.
absl::StatusOr<double> DoubleOr(const Hyperparameters& hp, absl::string_view name,
                                double fallback) {
  if (!Given(hp, name)) return fallback;
  return hp.GetDouble(name);
}

absl::StatusOr<OptimizerKind> ReadKind(const Hyperparameters& hp) {
  if (!Given(hp, "optimizer")) return OptimizerKind::kSgd;
  absl::StatusOr<const std::string*> name = hp.GetString("optimizer");
  if (!name.ok()) return name.status();
  std::string known;
  for (OptimizerKind kind : kKinds) {
    if (**name == OptimizerKindName(kind)) return kind;
    absl::StrAppend(&known, known.empty() ? "" : ", ", OptimizerKindName(kind));
  }
  return absl::InvalidArgumentError(absl::StrCat("hyperparameter 'optimizer' = \"", **name,
                                                 "\" is not a known optimizer; known: ", known));
}

absl::Status ReadSgd(const Hyperparameters& hp, OptimizerOptions& options) {
  if (!Given(hp, "learning_rate")) {
    std::vector<absl::string_view> given;
    for (const auto& [name, value] : hp.values()) {
      if (name != "learning_rate") given.push_back(name);  // a null one is no slip
    }
    const std::optional<std::string> slip = ClosestName("learning_rate", given);
    return absl::InvalidArgumentError(absl::StrCat(
        "hyperparameter 'learning_rate' is required for optimizer sgd (it has no default); "
        "allowed: > 0",
        slip ? absl::StrCat(" (did you mean 'learning_rate' where the config has '", *slip, "'?)")
             : ""));
  }
  absl::StatusOr<double> momentum = DoubleOr(hp, "momentum", 0);
  if (!momentum.ok()) return momentum.status();
  options.momentum = *momentum;
  if (Given(hp, "nesterov")) {
    absl::StatusOr<bool> nesterov = hp.GetBool("nesterov");
    if (!nesterov.ok()) return nesterov.status();
    options.nesterov = *nesterov;
  }
  return absl::OkStatus();
}

absl::Status ReadAdam(const Hyperparameters& hp, OptimizerOptions& options) {
  for (auto [name, field] : {std::pair{"beta1", &options.beta1}, std::pair{"beta2", &options.beta2},
                             std::pair{"eps", &options.eps}}) {
    absl::StatusOr<double> value = DoubleOr(hp, name, *field);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OptimizerOptions> OptimizerOptionsFromHyperparameters(const Hyperparameters& hp) {
  OptimizerOptions options;
  absl::StatusOr<OptimizerKind> kind = ReadKind(hp);
  if (!kind.ok()) return kind.status();
  options.kind = *kind;
  const bool sgd = options.kind == OptimizerKind::kSgd;
  absl::Status read = sgd ? ReadSgd(hp, options) : ReadAdam(hp, options);
  if (!read.ok()) return read;
  absl::StatusOr<double> learning_rate = DoubleOr(hp, "learning_rate", 0.001);
  if (!learning_rate.ok()) return learning_rate.status();
  options.learning_rate = *learning_rate;
  absl::StatusOr<double> weight_decay =
      DoubleOr(hp, "weight_decay", options.kind == OptimizerKind::kAdamW ? 0.01 : 0);
  if (!weight_decay.ok()) return weight_decay.status();
  options.weight_decay = *weight_decay;
  if (absl::Status valid = ValidateOptimizerOptions(options); !valid.ok()) return valid;
  return options;
}

std::vector<std::string> OptimizerHyperparameterNames(OptimizerOptions::Kind kind) {
  std::vector<std::string> names = {"optimizer", "learning_rate", "weight_decay"};
  if (kind == OptimizerKind::kSgd) {
    names.insert(names.end(), {"momentum", "nesterov"});
  } else {
    names.insert(names.end(), {"beta1", "beta2", "eps"});
  }
  return names;
}

absl::Status CheckOwnOptimizerKeys(const OptimizationsConfig& optimizations,
                                   absl::string_view plugin_name) {
  if (optimizations.zero_stage != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "optimizations.zero_stage %u shards the built-in optimizer, but plugin %s steps its own "
        "optimizer (optimizer_step); set zero_stage to 0, or leave the step to Cohort",
        optimizations.zero_stage, plugin_name));
  }
  if (optimizations.learning_rate_scaling != LearningRateScaling::kNone) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "optimizations.learning_rate_scaling %s scales the built-in optimizer's learning rate, "
        "but plugin %s steps its own optimizer (optimizer_step); set it to none and scale the "
        "plugin's rate itself (its trial context's size is the slots), or leave the step to Cohort",
        PolicyName(optimizations.learning_rate_scaling), plugin_name));
  }
  return absl::OkStatus();
}

}  // namespace cohort
