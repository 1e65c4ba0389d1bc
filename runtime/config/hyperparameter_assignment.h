// A hyperparameter given on a command line as NAME=VALUE (`cohort plugin check --hparam`), its
// value typed as the experiment config types it, so that a plugin is checked with the types its
// trials receive: the value is read as YAML, as `--set hyperparameters.NAME=VALUE` reads it.
//
//   SetHyperparameterFromAssignment("layers=3", hyperparameters);     // int 3
//   SetHyperparameterFromAssignment("nesterov=yes", hyperparameters); // bool true
//   SetHyperparameterFromAssignment("tag=nan", hyperparameters);      // string "nan"
//   SetHyperparameterFromAssignment("sizes=[64, 32]", hyperparameters);  // Other "[64, 32]"
//   SetHyperparameterFromAssignment("opt={lr: 0.1}", hyperparameters);   // opt.lr: double 0.1
//
// Thread-safety: mutates `hyperparameters`; one caller at a time.
#ifndef COHORT_RUNTIME_CONFIG_HYPERPARAMETER_ASSIGNMENT_H_
#define COHORT_RUNTIME_CONFIG_HYPERPARAMETER_ASSIGNMENT_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

// Sets NAME to VALUE: plain scalars typed (decimal int, finite number, true/false/yes/no/on/off),
// quoted or other scalars as strings (`'3'` is "3"), lists as Other holding their YAML text, an
// empty VALUE or null as Other `~`; a map is a group, as in the config (`opt={lr: 0.1}` sets
// `opt.lr`), and a search space the single searcher's choice. INVALID_ARGUMENT, quoting the
// assignment, without '=', with an empty NAME, or when VALUE is not YAML; the config's error,
// naming the field, for a space it refuses.
absl::Status SetHyperparameterFromAssignment(absl::string_view assignment,
                                             Hyperparameters& hyperparameters);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_HYPERPARAMETER_ASSIGNMENT_H_
