// The Orchestrator's answers to the requests that change an experiment or a trial after its
// submission: pause and activate, archive and unarchive, delete (ChangeExperiment), and killing
// one trial (KillTrial). A refused change leaves everything as it was.
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/orchestrator/unknown_ids.h"

namespace cohort {
namespace {

// "experiment 3 is active; only an ended experiment can be archived (kill it first)".
ClientError Refused(const orchestration::Experiment& experiment, absl::string_view rule) {
  return ClientError{ClientErrorCode::kInvalidRequest,
                     absl::StrCat("experiment ", experiment.id, " is ",
                                  ExperimentStateName(experiment.state), "; ", rule)};
}

}  // namespace

ClientMessage Orchestrator::Change(const ChangeExperiment& change) {
  auto found = cluster_->experiments.find(change.experiment_id);
  if (found == cluster_->experiments.end()) {
    return UnknownExperiment(change.experiment_id);
  }
  Experiment& experiment = *found->second;
  switch (change.change) {
    case ExperimentChangeKind::kPause:
      return Pause(experiment);
    case ExperimentChangeKind::kActivate:
      return Activate(experiment);
    case ExperimentChangeKind::kArchive:
      return Archive(experiment, true);
    case ExperimentChangeKind::kUnarchive:
      return Archive(experiment, false);
    case ExperimentChangeKind::kDelete:
      return Delete(experiment);
  }
  return ClientError{ClientErrorCode::kInvalidRequest, "unknown change"};
}

ClientMessage Orchestrator::Pause(Experiment& experiment) {
  if (experiment.state == ExperimentState::kPaused) return ClientAck{};
  if (experiment.state != ExperimentState::kActive) {
    return Refused(experiment, "only an active experiment can be paused");
  }
  experiment.state = ExperimentState::kPaused;
  Notice(absl::StrCat("experiment ", experiment.id,
                      ": paused; its running trials checkpoint and stop"));
  for (const auto& [request_id, trial_id] : experiment.trials) {
    Trial& trial = *cluster_->trials.at(trial_id);
    if (!trial.lifecycle.Pause()) continue;  // not queued nor running: nothing to stop
    if (trial.lifecycle.pausing()) {
      if (Task* task = FindTask(trial.task_id)) {
        StopTask(*task, "the experiment was paused", options_.kill_grace_seconds);
      }
    } else {
      DropQueuedTask(trial);
    }
  }
  Save(experiment);
  return ClientAck{};
}

ClientMessage Orchestrator::Activate(Experiment& experiment) {
  if (experiment.state == ExperimentState::kActive) return ClientAck{};
  if (experiment.state != ExperimentState::kPaused) {
    return Refused(experiment, "only a paused experiment can be activated");
  }
  experiment.state = ExperimentState::kActive;
  Notice(absl::StrCat("experiment ", experiment.id,
                      ": activated; its trials go on from their latest checkpoints"));
  StartTasksWithinLimits(experiment);
  MaybeEndExperiment(experiment);
  Save(experiment);
  return ClientAck{};
}

ClientMessage Orchestrator::Archive(Experiment& experiment, bool archived) {
  if (!experiment.Ended()) {
    return Refused(experiment,
                   absl::StrCat("only an ended experiment can be ",
                                archived ? "archived" : "unarchived", " (kill it first)"));
  }
  if (experiment.record.archived == archived) return ClientAck{};
  experiment.record.archived = archived;
  Event(absl::StrCat("experiment ", experiment.id, archived ? " archived" : " unarchived"));
  Save(experiment);
  return ClientAck{};
}

ClientMessage Orchestrator::Delete(Experiment& experiment) {
  if (!experiment.Ended()) {
    return Refused(experiment, "only an ended experiment can be deleted (kill it first)");
  }
  const uint64_t id = experiment.id;
  // Only the storage folder the orchestrator made for this experiment is removed: a folder given
  // by hand could hold more than its checkpoints.
  const std::filesystem::path storage(experiment.checkpoint_root);
  const bool own_storage = storage.filename() == absl::StrCat("experiment-", id);
  if (absl::Status removed = state_.RemoveExperiment(id, next_experiment_id_, next_trial_id_);
      !removed.ok()) {
    return ClientError{ClientErrorCode::kUnspecified, std::string(removed.message())};
  }
  std::error_code error;
  if (own_storage) std::filesystem::remove_all(storage, error);
  if (error) {
    Notice(absl::StrCat("warning: experiment ", id, " deleted, but its checkpoints in ",
                        storage.string(), " could not be removed: ", error.message()));
  }
  for (const auto& [request_id, trial_id] : experiment.trials) cluster_->trials.erase(trial_id);
  Notice(absl::StrCat("experiment ", id, " deleted, with its run folder",
                      own_storage ? " and checkpoints" : ""));
  cluster_->experiments.erase(id);  // `experiment` is gone from here on
  return ClientAck{};
}

ClientMessage Orchestrator::KillOneTrial(const KillTrial& kill) {
  Trial* trial = FindTrial(kill.trial_id);
  if (trial == nullptr) {
    return UnknownTrial(kill.trial_id);
  }
  if (!trial->lifecycle.Stop()) return ClientAck{};  // ended already
  Experiment& experiment = *cluster_->experiments.at(trial->experiment_id);
  Notice(absl::StrCat("trial ", trial->id, " (experiment ", experiment.id, "): killed"));
  SettleStop(*trial, TrialState::kStopped, "the trial was killed");
  if (trial->ended()) {
    if (experiment.Going()) TellSearcherExited(experiment, *trial);
    MaybeEndExperiment(experiment);
  }
  experiment.dirty = true;
  return ClientAck{};
}

}  // namespace cohort
