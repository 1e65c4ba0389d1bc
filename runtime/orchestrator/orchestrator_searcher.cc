// The Orchestrator's side of its experiments' searchers: what each is told, kept in the record's
// searcher events, and heard again in order when an experiment resumes, so that a resumed search
// (adaptive_asha's promotions and closes above all) goes on from the decisions it had made.
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort {
namespace {

std::string Describe(const SearcherEvent& event) {
  return event.exited ? absl::StrCat("trial ", event.trial_id, "'s early exit")
                      : absl::StrCat("trial ", event.trial_id, "'s validation at ", event.units);
}

}  // namespace

void Orchestrator::TellSearcherValidated(Experiment& experiment, Trial& trial, uint64_t units,
                                         double metric) {
  SearcherEvent event;
  event.trial_id = trial.id;
  event.units = units;
  if (!std::isnan(metric)) event.metric = metric;
  experiment.record.searcher_events.push_back(event);  // before the ops, which may tell more
  experiment.dirty = true;
  Apply(experiment, experiment.searcher->OnValidation(trial.request_id, units, metric));
}

void Orchestrator::TellSearcherExited(Experiment& experiment, Trial& trial) {
  SearcherEvent event;
  event.trial_id = trial.id;
  event.exited = true;
  experiment.record.searcher_events.push_back(event);
  experiment.dirty = true;
  Apply(experiment, experiment.searcher->OnTrialExitedEarly(trial.request_id));
}

std::string Orchestrator::ReplayMismatch(const Experiment& experiment,
                                         const SearcherEvent& event) const {
  const auto found = cluster_->trials.find(event.trial_id);
  if (found == cluster_->trials.end() || found->second->experiment_id != experiment.id) {
    return absl::StrCat("its searcher has not created trial ", event.trial_id, " again");
  }
  const Trial& trial = *found->second;
  if (event.exited) {
    if (trial.ended()) return "";
    return absl::StrCat("trial ", trial.id, " trains again in this resume");
  }
  if (trial.ended()) return absl::StrCat("trial ", trial.id, " has ended");
  if (!trial.lifecycle.wants_task() || trial.target_units != event.units) {
    return absl::StrCat("its searcher asks trial ", trial.id, " for ",
                        trial.lifecycle.wants_task()
                            ? absl::StrCat("training to ", trial.target_units)
                            : std::string("nothing"));
  }
  if (trial.batches_trained < trial.target_batches) {
    return absl::StrCat("trial ", trial.id, " resumes at batch ", trial.batches_trained,
                        ", before that validation's");
  }
  return "";
}

void Orchestrator::ReplaySearcherEvents(Experiment& experiment,
                                        const std::vector<SearcherEvent>& events) {
  size_t heard = 0;
  std::string mismatch;
  for (const SearcherEvent& event : events) {
    mismatch = ReplayMismatch(experiment, event);
    if (!mismatch.empty()) break;
    Trial& trial = *cluster_->trials.at(event.trial_id);
    if (event.exited) {
      experiment.exits_to_replay.erase(trial.id);
      TellSearcherExited(experiment, trial);
    } else {
      trial.lifecycle.Replayed();
      TellSearcherValidated(experiment, trial, event.units,
                            event.metric.value_or(std::numeric_limits<double>::quiet_NaN()));
    }
    ++heard;
  }
  // Ended trials whose exits the replay did not reach are told now, as at their creation.
  const std::set<uint64_t> untold = std::exchange(experiment.exits_to_replay, {});
  for (const uint64_t trial_id : untold) {
    Trial* trial = FindTrial(trial_id);
    if (trial != nullptr && trial->experiment_id == experiment.id && trial->ended()) {
      TellSearcherExited(experiment, *trial);
    }
  }
  if (events.empty()) return;
  if (heard == events.size()) {
    Event(absl::StrCat("experiment ", experiment.id, ": its searcher heard again the ",
                       events.size(),
                       " results it had been told, and goes on from the decisions it made"));
    return;
  }
  Notice(absl::StrCat("experiment ", experiment.id, ": its searcher heard again ", heard,
                      " of the ", events.size(), " results it had been told; the next, ",
                      Describe(events[heard]), ", does not match the trials resumed (", mismatch,
                      "), so from there it decides again"));
}

}  // namespace cohort
