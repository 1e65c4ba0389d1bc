// OptimizerOptions: which built-in optimizer updates the arena, and its settings (a trial's
// hyperparameters choose them: config/optimizer_hyperparameters.h).
//
//   OptimizerOptions options;
//   options.learning_rate = 0.1;
//   options.momentum = 0.9;
//   options.nesterov = true;
//   ValidateOptimizerOptions(options);  // OK
//   DescribeOptimizer(options);         // "sgd(lr=0.1, momentum=0.9, nesterov)"
//
// Thread-safety: plain values and pure functions; safe to use from any thread.
#ifndef COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_
#define COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort {

struct OptimizerOptions {
  enum class Kind { kSgd, kAdam, kAdamW };
  Kind kind = Kind::kSgd;
  double learning_rate = 0;
  double momentum = 0;      // SGD
  bool nesterov = false;    // SGD; requires momentum > 0
  double weight_decay = 0;  // SGD and Adam: L2 added to the gradient; AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam, AdamW
};

// "sgd", "adam", "adamw": the names the `optimizer` hyperparameter accepts.
absl::string_view OptimizerKindName(OptimizerOptions::Kind kind);

// Checks every field's range: learning_rate > 0, momentum in [0, 1), weight_decay >= 0, beta1 and
// beta2 in [0, 1), eps > 0, nesterov only with momentum > 0 (NaN is out of every range).
// INVALID_ARGUMENT naming the field (as its hyperparameter is named), its value and the range.
absl::Status ValidateOptimizerOptions(const OptimizerOptions& options);

// One line for logs: "sgd(lr=0.1, momentum=0.9, nesterov)", "adam(lr=0.001, beta1=0.9,
// beta2=0.999, eps=1e-08)", "adamw(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
// weight_decay=0.01)". Fields at their neutral value (momentum 0, no decay for sgd/adam) are left
// out.
std::string DescribeOptimizer(const OptimizerOptions& options);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_
