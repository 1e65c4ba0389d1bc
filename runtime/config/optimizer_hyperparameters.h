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
#include "absl/strings/string_view.h"
#include "runtime/config/experiment_config.h"
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

// The optimizations keys that act on the built-in optimizer alone, for a plugin (`plugin_name`)
// that steps its own (optimizer_step): FAILED_PRECONDITION naming `zero_stage` when it is not 0,
// else `learning_rate_scaling` when it is not none, with what to do instead; OK when neither is
// set. The worker refuses with it, and `cohort run` and `submit` before anything starts.
absl::Status CheckOwnOptimizerKeys(const OptimizationsConfig& optimizations,
                                   absl::string_view plugin_name);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_OPTIMIZER_HYPERPARAMETERS_H_
