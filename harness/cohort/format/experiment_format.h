// What `cohort experiment list` and `cohort experiment describe` print, from the orchestrator's
// answers. Pure functions of their arguments (times are shown in the local time zone).
//
//   std::fputs(FormatExperimentList(list).c_str(), stdout);
//   // ID  NAME   STATE   SEARCHER  PROGRESS  TRIALS   SUBMITTED
//   // 1   mnist  active  grid      42%       2/3/0/1  2024-05-01 14:03:22
//
// TRIALS counts active/completed/stopped/errored trials, which add up to the experiment's trials
// (a killed experiment's trials are stopped).
//
// Thread-safety: reentrant.
#ifndef COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_FORMAT_H_
#define COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/client/client_messages.h"

namespace cohort {

// The experiment's stopped trials: those that ended neither completed nor errored.
uint32_t StoppedTrials(const ExperimentSummary& summary);

// "2024-05-01 14:03:22" in the local time zone; "-" for 0 (not happened).
std::string FormatUnixTime(double unix_time);

// Appends "  <label padded to 16> <value>\n": a field of a description (describe's header).
void AppendField(absl::string_view label, absl::string_view value, std::string* out);

// "7 (validation_loss 0.0812 after 1200 batches, checkpoint trial-7-batch-1200)": the trial with
// the best searcher metric and its best checkpoint, or "-" before any.
std::string BestTrial(const ExperimentDescription& description);

// The searcher's progress as a whole percentage, "0%" to "100%".
std::string FormatProgress(double fraction);

// "loss=0.0812 accuracy=0.97" in the given order; "-" when empty.
std::string FormatMetrics(const std::vector<NamedValue>& metrics);

// A table ID NAME STATE SEARCHER PROGRESS TRIALS SUBMITTED, one row per experiment.
std::string FormatExperimentList(const ExperimentList& list);

// Summary lines (state, searcher and metric, progress, trial counts, the best trial by the
// searcher's metric, times, duration, error),
// then a trial table TRIAL STATE BATCHES RESTARTS BEST-METRIC CHECKPOINT HYPERPARAMETERS, then
// each trial's latest validation metrics and each trial's error. A running experiment's duration
// runs to `now_unix_time`.
std::string FormatExperimentDescription(const ExperimentDescription& description,
                                        double now_unix_time);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_FORMAT_H_
