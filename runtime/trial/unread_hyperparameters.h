// Hyperparameters nothing reads: set in the config (or added by a `--set` whose key the plugin
// does not know, such as a misspelled name) but asked for neither by the plugin nor by Cohort
// itself (global_batch_size, and the built-in optimizer's when it steps). Determined, Horovod and
// DDP train on silently in that case; Cohort warns once, after the trial's first batch, when the
// plugin has read what it needs.
//
//   std::vector<std::string> unread = UnreadHyperparameters(
//       config.hyperparameters, model.HyperparametersRead(), {"global_batch_size"});
//   std::vector<std::string> missing = AskedButNotSet(
//       config.hyperparameters, model.HyperparametersRead(), {"global_batch_size"});
//   if (!unread.empty()) events.OnNotice(UnreadHyperparametersNotice(unread, missing));
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_TRIAL_UNREAD_HYPERPARAMETERS_H_
#define COHORT_RUNTIME_TRIAL_UNREAD_HYPERPARAMETERS_H_

#include <set>
#include <string>
#include <vector>

#include "runtime/plugin/hyperparameters.h"

namespace cohort {

// The names in `set` that are in neither `read_by_plugin` nor `read_by_cohort`, in name order.
std::vector<std::string> UnreadHyperparameters(const Hyperparameters& set,
                                               const std::set<std::string>& read_by_plugin,
                                               const std::vector<std::string>& read_by_cohort);

// The names in `read_by_plugin` or `read_by_cohort` that are not in `set` (asked for, and taken
// at their defaults), in name order: what a misspelled name was likely meant to be.
std::vector<std::string> AskedButNotSet(const Hyperparameters& set,
                                        const std::set<std::string>& read_by_plugin,
                                        const std::vector<std::string>& read_by_cohort);

// "warning: hyperparameters lr and dropout were not read ...": one line naming them, each with
// the name of `asked_but_not_set` it is a slip of, if any ("learnig_rate (did you mean
// 'learning_rate'?)": ClosestName).
std::string UnreadHyperparametersNotice(const std::vector<std::string>& unread,
                                        const std::vector<std::string>& asked_but_not_set = {});

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_UNREAD_HYPERPARAMETERS_H_
