#include "runtime/optim/optimizer_options.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

using Kind = OptimizerOptions::Kind;

absl::Status OutOfRange(absl::string_view name, double value, absl::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat("hyperparameter '", name, "' = ", value,
                                                 " is out of range; allowed: ", allowed));
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
  if (!(options.momentum >= 0 && options.momentum < 1))
    return OutOfRange("momentum", options.momentum, "[0, 1)");
  if (!(wd >= 0 && std::isfinite(wd))) return OutOfRange("weight_decay", wd, ">= 0");
  if (!(options.beta1 >= 0 && options.beta1 < 1))
    return OutOfRange("beta1", options.beta1, "[0, 1)");
  if (!(options.beta2 >= 0 && options.beta2 < 1))
    return OutOfRange("beta2", options.beta2, "[0, 1)");
  if (!(options.eps > 0 && std::isfinite(options.eps)))
    return OutOfRange("eps", options.eps, "> 0");
  if (options.nesterov && options.momentum == 0) {
    return absl::InvalidArgumentError(
        "hyperparameter 'nesterov' = true requires 'momentum' > 0, but momentum = 0");
  }
  return absl::OkStatus();
}

std::string DescribeOptimizer(const OptimizerOptions& options) {
  std::string text = absl::StrCat(OptimizerKindName(options.kind), "(lr=", options.learning_rate);
  if (options.kind == Kind::kSgd) {
    if (options.momentum != 0) absl::StrAppend(&text, ", momentum=", options.momentum);
    if (options.nesterov) absl::StrAppend(&text, ", nesterov");
  } else {
    absl::StrAppend(&text, ", beta1=", options.beta1, ", beta2=", options.beta2,
                    ", eps=", options.eps);
  }
  if (options.weight_decay != 0 || options.kind == Kind::kAdamW) {
    absl::StrAppend(&text, ", weight_decay=", options.weight_decay);
  }
  return absl::StrCat(text, ")");
}

}  // namespace cohort
