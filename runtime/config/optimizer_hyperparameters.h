// The built-in optimizer a trial's hyperparameters choose, read and validated into the optimizer's
// OptimizerOptions.
//
//   Hyperparameters hp;
//   hp.Set("optimizer", "sgd");
//   hp.Set("learning_rate", 0.1);
//   hp.Set("momentum", 0.9);
//   hp.Set("nesterov", true);
//   absl::StatusOr<OptimizerOptions> options = OptimizerOptionsFromHyperparameters(hp);
//
// Thread-safety: a pure function; safe to use from any thread.
#ifndef COHORT_RUNTIME_CONFIG_OPTIMIZER_HYPERPARAMETERS_H_
#define COHORT_RUNTIME_CONFIG_OPTIMIZER_HYPERPARAMETERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/optim/optimizer_options.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

// Reads hyperparameters `optimizer` ("sgd" | "adam" | "adamw", default "sgd"), `learning_rate`
// (required for sgd; default 0.001 for adam/adamw), `momentum` (0), `nesterov` (false),
// `weight_decay` (0; 0.01 for adamw), `beta1` (0.9), `beta2` (0.999), `eps` (1e-8). Only the
// hyperparameters of the chosen optimizer are read: `momentum` and `nesterov` for sgd, `beta1`,
// `beta2` and `eps` for adam/adamw. Ints are accepted where doubles are expected.
// INVALID_ARGUMENT naming the hyperparameter: a wrong type, a value out of range (see
// ValidateOptimizerOptions), an unknown optimizer name (listing the known ones), a missing
// learning_rate for sgd.
absl::StatusOr<OptimizerOptions> OptimizerOptionsFromHyperparameters(const Hyperparameters& hp);

// The hyperparameters OptimizerOptionsFromHyperparameters reads for an optimizer of `kind`:
// optimizer, learning_rate, weight_decay, and momentum and nesterov (sgd) or beta1, beta2 and eps
// (adam, adamw).
std::vector<std::string> OptimizerHyperparameterNames(OptimizerOptions::Kind kind);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_OPTIMIZER_HYPERPARAMETERS_H_
