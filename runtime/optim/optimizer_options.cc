#include "runtime/optim/optimizer_options.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

using Kind = OptimizerOptions::Kind;

constexpr std::array<Kind, 3> kKinds = {Kind::kSgd, Kind::kAdam, Kind::kAdamW};

absl::Status OutOfRange(absl::string_view name, double value, absl::string_view allowed) {
  return absl::InvalidArgumentError(
      absl::StrCat("hyperparameter '", name, "' = ", value, " is out of range; allowed: ", allowed));
}

// The value of an optional double hyperparameter, or `fallback` when it is not set.
absl::StatusOr<double> DoubleOr(const Hyperparameters& hp, absl::string_view name, double fallback) {
  if (hp.TypeOf(name) == COHORT_HPARAM_ABSENT) return fallback;
  return hp.GetDouble(name);
}

absl::StatusOr<Kind> ReadKind(const Hyperparameters& hp) {
  if (hp.TypeOf("optimizer") == COHORT_HPARAM_ABSENT) return Kind::kSgd;
  absl::StatusOr<const std::string*> name = hp.GetString("optimizer");
  if (!name.ok()) return name.status();
  std::string known;
  for (Kind kind : kKinds) {
    if (**name == OptimizerKindName(kind)) return kind;
    absl::StrAppend(&known, known.empty() ? "" : ", ", OptimizerKindName(kind));
  }
  return absl::InvalidArgumentError(absl::StrCat("hyperparameter 'optimizer' = \"", **name,
                                                 "\" is not a known optimizer; known: ", known));
}

absl::Status ReadSgd(const Hyperparameters& hp, OptimizerOptions& options) {
  if (hp.TypeOf("learning_rate") == COHORT_HPARAM_ABSENT) {
    return absl::InvalidArgumentError(
        "hyperparameter 'learning_rate' is required for optimizer sgd (it has no default); allowed: > 0");
  }
  absl::StatusOr<double> momentum = DoubleOr(hp, "momentum", 0);
  if (!momentum.ok()) return momentum.status();
  options.momentum = *momentum;
  if (hp.TypeOf("nesterov") != COHORT_HPARAM_ABSENT) {
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

absl::string_view OptimizerKindName(OptimizerOptions::Kind kind) {
  switch (kind) {
    case Kind::kSgd:
      return "sgd";
    case Kind::kAdam:
      return "adam";
    case Kind::kAdamW:
      return "adamw";
  }
  return "unknown";
}

absl::Status ValidateOptimizerOptions(const OptimizerOptions& options) {
  // Each condition is written so that NaN fails it.
  const double lr = options.learning_rate, wd = options.weight_decay;
  if (!(lr > 0 && std::isfinite(lr))) return OutOfRange("learning_rate", lr, "> 0");
  if (!(options.momentum >= 0 && options.momentum < 1)) return OutOfRange("momentum", options.momentum, "[0, 1)");
  if (!(wd >= 0 && std::isfinite(wd))) return OutOfRange("weight_decay", wd, ">= 0");
  if (!(options.beta1 >= 0 && options.beta1 < 1)) return OutOfRange("beta1", options.beta1, "[0, 1)");
  if (!(options.beta2 >= 0 && options.beta2 < 1)) return OutOfRange("beta2", options.beta2, "[0, 1)");
  if (!(options.eps > 0 && std::isfinite(options.eps))) return OutOfRange("eps", options.eps, "> 0");
  if (options.nesterov && options.momentum == 0) {
    return absl::InvalidArgumentError(
        "hyperparameter 'nesterov' = true requires 'momentum' > 0, but momentum = 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<OptimizerOptions> OptimizerOptionsFromHyperparameters(const Hyperparameters& hp) {
  OptimizerOptions options;
  absl::StatusOr<Kind> kind = ReadKind(hp);
  if (!kind.ok()) return kind.status();
  options.kind = *kind;
  const bool sgd = options.kind == Kind::kSgd;
  absl::Status read = sgd ? ReadSgd(hp, options) : ReadAdam(hp, options);
  if (!read.ok()) return read;
  absl::StatusOr<double> learning_rate = DoubleOr(hp, "learning_rate", 0.001);
  if (!learning_rate.ok()) return learning_rate.status();
  options.learning_rate = *learning_rate;
  absl::StatusOr<double> weight_decay = DoubleOr(hp, "weight_decay", options.kind == Kind::kAdamW ? 0.01 : 0);
  if (!weight_decay.ok()) return weight_decay.status();
  options.weight_decay = *weight_decay;
  if (absl::Status valid = ValidateOptimizerOptions(options); !valid.ok()) return valid;
  return options;
}

std::string DescribeOptimizer(const OptimizerOptions& options) {
  std::string text = absl::StrCat(OptimizerKindName(options.kind), "(lr=", options.learning_rate);
  if (options.kind == Kind::kSgd) {
    if (options.momentum != 0) absl::StrAppend(&text, ", momentum=", options.momentum);
    if (options.nesterov) absl::StrAppend(&text, ", nesterov");
  } else {
    absl::StrAppend(&text, ", beta1=", options.beta1, ", beta2=", options.beta2, ", eps=", options.eps);
  }
  if (options.weight_decay != 0 || options.kind == Kind::kAdamW) {
    absl::StrAppend(&text, ", weight_decay=", options.weight_decay);
  }
  return absl::StrCat(text, ")");
}

}  // namespace cohort
