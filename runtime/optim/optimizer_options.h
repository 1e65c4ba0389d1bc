// OptimizerOptions: which built-in optimizer updates the arena, and its hyperparameters, read and
// validated from a trial's hyperparameters.
//
//   Hyperparameters hp;
//   hp.Set("optimizer", "sgd");
//   hp.Set("learning_rate", 0.1);
//   hp.Set("momentum", 0.9);
//   hp.Set("nesterov", true);
//   absl::StatusOr<OptimizerOptions> options = OptimizerOptionsFromHyperparameters(hp);
//   DescribeOptimizer(*options);  // "sgd(lr=0.1, momentum=0.9, nesterov)"
//
// Thread-safety: plain values and pure functions; safe to use from any thread.
#ifndef COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_
#define COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

struct OptimizerOptions {
  enum class Kind { kSgd, kAdam, kAdamW };
  Kind kind = Kind::kSgd;
  double learning_rate = 0;
  double momentum = 0;        // SGD
  bool nesterov = false;      // SGD; requires momentum > 0
  double weight_decay = 0;    // SGD and Adam: L2 added to the gradient; AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam, AdamW
};

// "sgd", "adam", "adamw": the names the `optimizer` hyperparameter accepts.
absl::string_view OptimizerKindName(OptimizerOptions::Kind kind);

// Checks every field's range: learning_rate > 0, momentum in [0, 1), weight_decay >= 0, beta1 and
// beta2 in [0, 1), eps > 0, nesterov only with momentum > 0 (NaN is out of every range).
// INVALID_ARGUMENT naming the field (as its hyperparameter is named), its value and the range.
absl::Status ValidateOptimizerOptions(const OptimizerOptions& options);

// Reads hyperparameters `optimizer` ("sgd" | "adam" | "adamw", default "sgd"), `learning_rate`
// (required for sgd; default 0.001 for adam/adamw), `momentum` (0), `nesterov` (false),
// `weight_decay` (0; 0.01 for adamw), `beta1` (0.9), `beta2` (0.999), `eps` (1e-8). Only the
// hyperparameters of the chosen optimizer are read: `momentum` and `nesterov` for sgd, `beta1`,
// `beta2` and `eps` for adam/adamw. Ints are accepted where doubles are expected.
// INVALID_ARGUMENT naming the hyperparameter: a wrong type, a value out of range (see
// ValidateOptimizerOptions), an unknown optimizer name (listing the known ones), a missing
// learning_rate for sgd.
absl::StatusOr<OptimizerOptions> OptimizerOptionsFromHyperparameters(const Hyperparameters& hp);

// One line for logs: "sgd(lr=0.1, momentum=0.9, nesterov)", "adam(lr=0.001, beta1=0.9,
// beta2=0.999, eps=1e-08)", "adamw(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08,
// weight_decay=0.01)". Fields at their neutral value (momentum 0, no decay for sgd/adam) are left
// out.
std::string DescribeOptimizer(const OptimizerOptions& options);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_OPTIMIZER_OPTIONS_H_
