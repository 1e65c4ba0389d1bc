// What `cohort submit --follow` prints while it watches an experiment: one line per change
// between two descriptions of it, and the exit status once it has ended.
//
//   std::optional<ExperimentDescription> last;
//   ... every second:
//   for (const std::string& line : ExperimentChanges(last ? &*last : nullptr, now)) puts(line);
//   if (ExperimentEnded(now.summary.state)) return ExitStatusForEnded(now.summary.state);
//   last = now;
//
// Lines: a new trial ("trial 7 queued, hyperparameters {"lr":0.1}"), a trial's new metrics as they
// come ("trial 7 at batch 1200/5000: loss=0.31 (51234 records/s)", "trial 7 validation:
// loss=0.29 accuracy=0.91"), a trial's new state ("trial 7 running", "trial 7 completed after 500
// batches, best loss 0.0812", "trial 7 error: <why>"), a restart ("trial 7 restart 1: <last
// failure>"), and the experiment's new state ("experiment 3 completed", "experiment 3 error:
// <why>").
//
// Thread-safety: reentrant.
#ifndef COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_
#define COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_

#include <string>
#include <vector>

#include "runtime/client/client_messages.h"

namespace cohort {

// The changes from `before` (nullptr: nothing seen yet, as if the experiment were active with no
// trials) to `now`, trials in ascending id, then the experiment's own.
std::vector<std::string> ExperimentChanges(const ExperimentDescription* before,
                                           const ExperimentDescription& now);

// 0 completed, 130 stopped, 1 error (and any state that has not ended).
int ExitStatusForEnded(ExperimentState state);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_
