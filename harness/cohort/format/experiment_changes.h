// What `cohort submit --follow` prints while it watches an experiment: one line per change
// between two descriptions of it, and the exit status once it has ended.
//
//   std::optional<ExperimentDescription> last;
//   ... every second:
//   for (const std::string& line : ExperimentChanges(last ? &*last : nullptr, now)) puts(line);
//   if (ExperimentEnded(now.summary.state)) return ExitStatusForEnded(now.summary.state);
//   last = now;
//
// Lines: a new trial ("trial 7 queued, hyperparameters {"lr":0.1}"; one first seen past running,
// "trial 7 hyperparameters {...}", gets its state line after its metrics), a trial's new metrics as
// they come ("trial 7 at batch 1200/5000: loss=0.31 (51234 records/s)", the latest training report
// only; "trial 7 validation after 1200 batches: loss=0.29 accuracy=0.91", every validation, also
// those reported between two descriptions, which `validations` is asked for), a trial's new state
// ("trial 7 running", "trial 7 completed after 500 batches, best loss 0.0812", "trial 7 paused
// after 400 batches, best loss 1.8; waiting for the searcher to promote or close it", "trial 7
// error: <why>"), a restart ("trial 7 restart 1: <last failure>"), and the experiment's new state
// ("experiment 3 completed, best trial 7 (loss 0.0812 after 500 batches, checkpoint ...)",
// "experiment 3 error: <why>").
//
// Thread-safety: reentrant.
#ifndef COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_
#define COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/client/client_messages.h"

namespace cohort {

// Every validation trial `trial_id` reported, ascending (a DescribeTrial's); empty when they
// cannot be had.
using TrialValidations = std::function<std::vector<ValidationRow>(uint64_t trial_id)>;

// The changes from `before` (nullptr: nothing seen yet, as if the experiment were active with no
// trials) to `now`, trials in ascending id, then the experiment's own. A trial whose latest
// validation is newer than it was gets a line for each validation `validations` gives since (up
// to that latest one); without `validations`, or when it gives none, for the latest only.
std::vector<std::string> ExperimentChanges(const ExperimentDescription* before,
                                           const ExperimentDescription& now,
                                           const TrialValidations& validations = nullptr);

// 0 completed, 130 stopped, 1 error (and any state that has not ended).
int ExitStatusForEnded(ExperimentState state);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_CHANGES_H_
