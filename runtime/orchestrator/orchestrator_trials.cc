// The Orchestrator's experiments, trials and tasks: a searcher's ops turned into trials and
// tasks, tasks queued and placed, a task's end decided (task_ending.h) and carried out, trials
// rewound or resumed, experiments ended and their records saved.
#include <algorithm>
#include <limits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/orchestrator/trial_config.h"
#include "runtime/record/record_retention.h"
#include "runtime/record/trial_resume.h"

namespace cohort {

void Orchestrator::Apply(Experiment& experiment, const std::vector<SearcherOp>& ops) {
  std::vector<uint64_t> exited_early;  // ids of trials recovered as ended
  for (const SearcherOp& op : ops) {
    if (const auto* create = std::get_if<CreateTrial>(&op)) {
      auto trial = std::make_unique<Trial>(options_.log_lines_in_memory);
      if (experiment.recorded_trial_ids.empty()) {
        trial->id = next_trial_id_++;
      } else {
        trial->id = experiment.recorded_trial_ids.front();
        experiment.recorded_trial_ids.pop_front();
        next_trial_id_ = std::max(next_trial_id_, trial->id + 1);
      }
      trial->experiment_id = experiment.id;
      trial->request_id = create->request_id;
      trial->hparams = create->hparams;
      const absl::StatusOr<int64_t> batch = create->hparams.GetInt("global_batch_size");
      trial->global_batch_size =
          batch.ok() ? static_cast<uint64_t>(*batch) : experiment.config.global_batch_size;
      trial->hparams_json = HyperparametersJson(create->hparams);
      if (absl::Status prepared = experiment.folder->PrepareTrial(trial->id); !prepared.ok()) {
        Notice(absl::StrCat("warning: ", prepared.message()));
      }
      TrialRecord& record = experiment.record.trial(trial->id);
      record.hyperparameters_json = trial->hparams_json;
      experiment.trials[create->request_id] = trial->id;
      Trial& added = *cluster_->trials.emplace(trial->id, std::move(trial)).first->second;
      if (auto ended = experiment.ended_trials.extract(added.id); !ended.empty()) {
        added.log.AppendRecorded(experiment.folder->log_path(added.id));
        added.EndAsRecorded(ended.mapped());
        record = std::move(ended.mapped());
        // A replay tells its exit where its events have it.
        if (!experiment.exits_to_replay.contains(added.id)) exited_early.push_back(added.id);
      } else if (experiment.resume) {
        ResumeTrial(experiment, added);
      }
    } else if (const auto* train = std::get_if<TrainTrial>(&op)) {
      auto found = experiment.trials.find(train->request_id);
      if (found == experiment.trials.end()) continue;
      Trial& trial = *cluster_->trials.at(found->second);
      if (trial.ended()) continue;
      trial.target_units = train->batches;
      trial.target_batches =
          TrialBatches(train->batches, experiment.searcher_counts_records, trial.global_batch_size,
                       experiment.config.slots_per_trial);
      // A trial of a resumed run may have trained and validated its target before the stop: its
      // task checks the checkpoint against the settings and ends, validating nothing again.
      trial.segment_metric = ValidatedTarget(experiment, trial);
      trial.lifecycle.Train();
    } else if (const auto* close = std::get_if<CloseTrial>(&op)) {
      auto found = experiment.trials.find(close->request_id);
      if (found == experiment.trials.end()) continue;
      Trial& trial = *cluster_->trials.at(found->second);
      if (trial.lifecycle.Close())
        SettleStop(trial, TrialState::kCompleted, "closed by the searcher");
    } else if (std::holds_alternative<Shutdown>(op)) {
      experiment.searcher_done = true;
    }
  }
  for (const uint64_t trial_id : exited_early) {
    TellSearcherExited(experiment, *cluster_->trials.at(trial_id));
  }
  StartTasksWithinLimits(experiment);
  MaybeEndExperiment(experiment);
  experiment.dirty = true;
}

void Orchestrator::StartTasksWithinLimits(Experiment& experiment) {
  if (experiment.state != ExperimentState::kActive || experiment.replaying) return;
  const uint64_t limit = experiment.config.searcher.max_concurrent_trials == 0
                             ? std::numeric_limits<uint64_t>::max()
                             : experiment.config.searcher.max_concurrent_trials;
  uint64_t training = 0;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    if (cluster_->trials.at(trial_id)->task_id != 0) ++training;
  }
  for (const auto& [request_id, trial_id] : experiment.trials) {
    Trial& trial = *cluster_->trials.at(trial_id);
    if (!trial.lifecycle.wants_task() || training >= limit) continue;
    auto task = std::make_unique<Task>();
    task->id = next_task_id_++;
    if (absl::Status saved = state_.StoreFirstFreeTaskId(next_task_id_); !saved.ok()) {
      Notice(absl::StrCat("warning: ", saved.message()));
    }
    task->trial_id = trial.id;
    task->experiment_id = experiment.id;
    task->slots = experiment.config.slots_per_trial;
    task->attempt = trial.attempts++;
    task->resume_checkpoint_id = trial.latest_checkpoint_id;
    task->queued_unix = clock_.UnixSeconds();
    trial.task_id = task->id;
    trial.lifecycle.TaskCreated();
    // The queue goes by experiment, oldest first (as Determined orders its jobs by submission),
    // then in the order tasks were made: a trial restarted or placed again goes ahead of every
    // later experiment's tasks rather than behind them.
    const auto later = std::find_if(queue_.begin(), queue_.end(), [&](uint64_t queued) {
      return cluster_->tasks.at(queued)->experiment_id > experiment.id;
    });
    queue_.insert(later, task->id);
    cluster_->tasks.emplace(task->id, std::move(task));
    ++training;
  }
}

void Orchestrator::SettleStop(Trial& trial, TrialState end, absl::string_view reason) {
  if (trial.ended()) {
    DropQueuedTask(trial);
    EndTrial(trial, end, "");
  } else if (Task* task = FindTask(trial.task_id)) {
    StopTask(*task, reason, options_.kill_grace_seconds);
  }
}

void Orchestrator::DropQueuedTask(Trial& trial) {
  Task* task = FindTask(trial.task_id);
  if (task == nullptr || task->state != TaskRowState::kQueued) return;
  ReleaseJob(*task);
  std::erase(queue_, task->id);
  cluster_->tasks.erase(task->id);
  trial.task_id = 0;
}

void Orchestrator::PlaceQueuedTasks() {
  GrowElasticTasks();
  if (options_.provisioner != nullptr) {
    ProvisionQueuedTasks();  // with an empty queue too: the provisioner's answers come in
    return;
  }
  if (queue_.empty()) return;
  std::vector<AgentView> views = AgentViews();
  const std::string away = AwayAgentsNote();
  if (views.empty()) {
    const std::string reason = away.empty() ? std::string("no agent is connected")
                                            : absl::StrCat("no agent takes a task now", away);
    for (const uint64_t task_id : queue_) SetWaitingReason(*cluster_->tasks.at(task_id), reason);
    return;
  }
  std::vector<PlacementRequest> requests;
  for (const uint64_t task_id : queue_) {
    const Task& task = *cluster_->tasks.at(task_id);
    requests.push_back(PlacementRequest{task.id, task.trial_id, task.slots});
  }
  const std::vector<QueuedDecision> decisions = PlaceInQueueOrder(requests, &views);
  for (const QueuedDecision& decision : decisions) {
    Task& task = *cluster_->tasks.at(decision.request.task_id);
    std::optional<Placement> placement;
    if (const auto* waiting = std::get_if<Waiting>(&decision.decision)) {
      placement = PlaceOnFewerSlots(task, waiting->reason, &views);
      if (!placement) {
        SetWaitingReason(task, absl::StrCat(waiting->reason, away));
        continue;
      }
    } else {
      placement = std::get<Placement>(decision.decision);
    }
    std::erase(queue_, task.id);
    Launch(task, *placement);
  }
}

void Orchestrator::SetWaitingReason(Task& task, absl::string_view reason) {
  if (task.waiting_reason == reason) return;
  task.waiting_reason = std::string(reason);
  Event(absl::StrCat("task ", task.id, " (trial ", task.trial_id, ", experiment ",
                     task.experiment_id, ") waits: ", reason));
}

void Orchestrator::Launch(Task& task, const Placement& placement) {
  Trial& trial = *cluster_->trials.at(task.trial_id);
  Experiment& experiment = *cluster_->experiments.at(task.experiment_id);
  task.state = TaskRowState::kStarting;
  task.waiting_reason.clear();
  task.launched_at = clock_.MonotonicSeconds();
  trial.lifecycle.TaskLaunched();
  // An elastic trial on fewer slots trains as if configured for them (the same records per batch).
  ExperimentConfig config = experiment.config;
  config.slots_per_trial = task.slots;
  absl::StatusOr<std::string> yaml = TrialConfigYaml(config, trial.hparams, trial.target_batches);
  if (!yaml.ok()) {
    // The experiment's config validated at submission; a trial's values that do not is an error
    // of that trial alone.
    task.flags.failure = std::string(yaml.status().message());
    Finish(task);
    return;
  }
  StartTask common;
  common.task_id = task.id;
  common.trial_id = trial.id;
  common.experiment_id = experiment.id;
  common.attempt = task.attempt;
  common.world_size = task.slots;
  common.worker.plugin_path = experiment.config.entrypoint;
  common.worker.config_yaml = *std::move(yaml);
  common.worker.checkpoint_root = experiment.checkpoint_root;
  common.worker.resume_checkpoint_id = task.resume_checkpoint_id;
  // Its seed comes from its place in its experiment, not from the orchestrator's id for it.
  common.worker.trial_number = trial.request_id;
  // A trial whose checkpoint is at its target but whose validation there never reached the record
  // (it ended while the orchestrator was down): its task validates there, or the searcher would
  // have no result for it.
  common.worker.validate_at_resume = !task.resume_checkpoint_id.empty() &&
                                     trial.latest_checkpoint_batches == trial.target_batches &&
                                     !trial.segment_metric;
  std::vector<std::pair<std::string, StartTask>> messages =
      StartTasksFor(common, options_.rendezvous_endpoint, placement);
  for (size_t index = 0; index < messages.size(); ++index) {
    const auto& [agent_id, message] = messages[index];
    AgentPart& part = task.parts[agent_id];
    part.slots = placement.agents[index].slots;
    for (const RankAssignment& rank : message.ranks)
      part.ranks.insert(static_cast<int32_t>(rank.rank));
    Agent& agent = *cluster_->agents.at(agent_id);
    for (const uint32_t slot : part.slots) agent.busy[slot] = SlotUser{task.id, trial.id};
    part.start_message_id = outbox_.Send(agent_id, message, 0);
  }
  const std::string agents = absl::StrJoin(
      placement.agents, ", ",
      [](std::string* out, const AgentSlots& a) { absl::StrAppend(out, a.agent_id); });
  const auto slots_of = [this](const std::string& agent_id) -> const std::vector<AgentSlot>& {
    return cluster_->agents.at(agent_id)->slots;
  };
  if (std::optional<std::string> mixed = MixedGpuModels(placement, slots_of)) {
    Notice(absl::StrCat("warning: trial ", trial.id, " (experiment ", experiment.id, ") runs on ",
                        *mixed,
                        ": a trial runs at the pace of its slowest GPU; give it "
                        "identical GPUs (cohort doctor names each agent's models)"));
  }
  const std::string starts =
      absl::StrCat("task ", task.id, " trains to batch ", trial.target_batches, " on ", agents,
                   task.resume_checkpoint_id.empty() ? "" : ", resuming from checkpoint ",
                   task.resume_checkpoint_id,
                   common.worker.validate_at_resume
                       ? ", which it validates first (its validation was not recorded)"
                       : "");
  NoteInTrialLog(trial, task.attempt, starts);
  const std::string line =
      absl::StrCat("trial ", trial.id, " (experiment ", experiment.id, "): ", starts);
  task.resume_checkpoint_id.empty() ? Event(line) : Notice(line);
}

bool Orchestrator::EndPart(Task& task, const std::string& agent_id) {
  AgentPart& part = task.parts.at(agent_id);
  part.done = true;
  if (auto agent = cluster_->agents.find(agent_id); agent != cluster_->agents.end()) {
    for (const uint32_t index : part.slots) agent->second->busy.erase(index);
  }
  for (const auto& [id, other] : task.parts) {
    if (!other.done) return false;
  }
  Finish(task);
  return true;
}

void Orchestrator::StopTask(Task& task, absl::string_view reason, uint32_t grace_seconds) {
  if (task.flags.stopping) return;
  task.flags.stopping = true;
  for (const auto& [agent_id, part] : task.parts) {
    if (part.done) continue;
    outbox_.Send(agent_id, KillTask{task.id, std::string(reason), grace_seconds}, 0);
  }
  if (task.state != TaskRowState::kQueued) task.state = TaskRowState::kStopping;
}

void Orchestrator::Finish(Task& task) {
  const uint64_t task_id = task.id;
  const uint32_t attempt = task.attempt;
  const uint32_t grow_to = task.grow_to;
  Trial& trial = *cluster_->trials.at(task.trial_id);
  Experiment& experiment = *cluster_->experiments.at(task.experiment_id);
  TaskEnding ending = EndingOf(task.parts, task.flags);
  SettleFlightRecords(experiment, trial, task_id, task.slots, ending);
  for (const std::string& agent_id : ending.draining_agents) {
    if (auto agent = cluster_->agents.find(agent_id); agent != cluster_->agents.end())
      agent->second->draining = true;
  }
  if (task.parts.size() > 1) ended_rendezvous_prefixes_.push_back(RendezvousPrefix(task_id));
  if (experiment.config.profiling_enabled && ending.reached_running) {
    timelines_.Merge({.trial_id = trial.id,
                      .checkpoint_root = experiment.checkpoint_root,
                      .out_path = experiment.folder->trial_dir(trial.id) + "/timeline.json"});
  }
  std::erase(queue_, task_id);
  ReleaseJob(task);
  trial.task_id = 0;
  cluster_->tasks.erase(task_id);  // `task` is gone from here on
  AdoptUnreportedCheckpoint(experiment, trial);

  const TrialDecision decision =
      NextForTrial(ending, {.experiment_stopping = trial.lifecycle.stopping() ||
                                                   experiment.state == ExperimentState::kStopping,
                            .closed = trial.lifecycle.closing(),
                            .pausing = trial.lifecycle.pausing() && !trial.segment_metric,
                            .regrowing = grow_to != 0 && !trial.segment_metric,
                            .restarts = trial.restarts,
                            .max_restarts = experiment.config.max_restarts});
  trial.lifecycle.TaskEnded(decision);
  const std::string from =
      trial.latest_checkpoint_id.empty() ? std::string("the start") : trial.latest_checkpoint_id;
  // How the task ended, in the trial's log, where what its ranks printed stops.
  const std::string ended = absl::StrCat("task ", task_id, " ended");
  switch (decision.next) {
    case TrialNext::kEnd:
      if (decision.end_state != TrialState::kCompleted) {
        NoteInTrialLog(trial, attempt,
                       absl::StrCat(ended, ": the trial ", TrialStateName(decision.end_state)));
      }
      EndTrial(trial, decision.end_state, "");
      // A trial killed on its own: its searcher goes on without it.
      if (decision.end_state == TrialState::kStopped && experiment.Going()) {
        TellSearcherExited(experiment, trial);
      }
      break;
    case TrialNext::kPause:
      NoteInTrialLog(trial, attempt, absl::StrCat(ended, ": paused, to go on from ", from));
      RewindTrial(experiment, trial);
      Event(absl::StrCat("trial ", trial.id, ": paused; it goes on from ", from,
                         " when its experiment is activated"));
      break;
    case TrialNext::kPlaceAgain:
      // Not the trial's fault: trained again from its latest checkpoint without using a restart.
      NoteInTrialLog(trial, attempt,
                     absl::StrCat(ended, ": ", decision.reason, "; placed again from ", from));
      RewindTrial(experiment, trial);
      Notice(absl::StrCat("trial ", trial.id, ": ", decision.reason, "; placing it again from ",
                          from));
      break;
    case TrialNext::kSegmentDone:
      FinishSegment(experiment, trial);
      break;
    case TrialNext::kRestart:
      ++trial.restarts;
      trial.error = decision.reason;
      // It trains again from its latest checkpoint: what was reported after it is forgotten.
      NoteInTrialLog(
          trial, attempt,
          absl::StrCat(ended, ", failed: ", decision.reason, "; restart ", trial.restarts, " of ",
                       experiment.config.max_restarts, " from ", from));
      RewindTrial(experiment, trial);
      Notice(absl::StrCat("trial ", trial.id, " failed: ", decision.reason, "; restart ",
                          trial.restarts, " of ", experiment.config.max_restarts, " from ", from));
      break;
    case TrialNext::kFail:
      NoteInTrialLog(trial, attempt,
                     absl::StrCat(ended, ", failed: ", decision.reason, "; the trial ends in error",
                                  decision.not_restarted.empty()
                                      ? ""
                                      : absl::StrCat(" (", decision.not_restarted, ")")));
      EndTrial(trial, TrialState::kError, decision.reason);
      if (experiment.Going()) TellSearcherExited(experiment, trial);
      break;
  }
  StartTasksWithinLimits(experiment);
  MaybeEndExperiment(experiment);
  experiment.dirty = true;
}

void Orchestrator::FinishSegment(Experiment& experiment, Trial& trial) {
  trial.batches_trained = std::max(trial.batches_trained, trial.target_batches);
  double metric = std::numeric_limits<double>::quiet_NaN();
  if (trial.segment_metric) {
    metric = *trial.segment_metric;
  } else {
    Notice(absl::StrCat("warning: trial ", trial.id, " reported no '",
                        experiment.config.searcher.metric, "' at batch ", trial.target_batches,
                        "; the searcher ranks it worst"));
  }
  if (experiment.Going()) TellSearcherValidated(experiment, trial, trial.target_units, metric);
}

void Orchestrator::RewindTrial(Experiment& experiment, Trial& trial) {
  trial.batches_trained = trial.latest_checkpoint_batches;
  for (std::string& line : RewindTrialFiles(*experiment.folder, trial.id,
                                            trial.latest_checkpoint_batches, &experiment.record)) {
    Notice(std::move(line));
  }
  // Back with the record's (its reports up to the checkpoint): the next progress brings it on.
  trial.records_trained =
      std::min(trial.records_trained, experiment.record.trial(trial.id).records_trained);
  // A checkpoint taken after the target's validation: its task trains nothing more and validates
  // nothing again, so the validation kept in the record is the segment's.
  trial.segment_metric = ValidatedTarget(experiment, trial);
}

std::optional<double> Orchestrator::ValidatedTarget(const Experiment& experiment,
                                                    const Trial& trial) const {
  if (trial.batches_trained < trial.target_batches) return std::nullopt;
  for (const TrialRecord& record : experiment.record.trials) {
    if (record.id != trial.id || !record.latest_validation) continue;
    if (record.latest_validation->batches == trial.target_batches) {
      return experiment.record.SearcherMetricOf(*record.latest_validation);
    }
    break;
  }
  // Validated there before a resume point past the target (a trial the searcher had sent on).
  const auto kept = trial.resumed_validations.find(trial.target_batches);
  if (kept != trial.resumed_validations.end()) return kept->second;
  return std::nullopt;
}

void Orchestrator::ResumeTrial(Experiment& experiment, Trial& trial) {
  trial.log.AppendRecorded(experiment.folder->log_path(trial.id));  // what it printed before
  absl::StatusOr<ResumePoint> point = ResumeTrialFiles(
      *experiment.folder, trial.id, experiment.checkpoint_root, &experiment.record);
  if (!point.ok()) {
    EndTrial(trial, TrialState::kError, absl::StrCat("cannot resume: ", point.status().message()));
    return;
  }
  for (std::string& warning : point->warnings) Notice(std::move(warning));
  trial.latest_checkpoint_id = point->checkpoint_id;
  trial.latest_checkpoint_batches = point->batches;
  trial.batches_trained = point->batches;
  for (const MetricsReport& report : point->kept_reports) {
    if (report.kind != ReportKind::kValidation) continue;
    if (const std::optional<double> metric = experiment.record.SearcherMetricOf(report)) {
      trial.resumed_validations[report.batches] = *metric;
    }
  }
}

void Orchestrator::ApplyRetention(Experiment& experiment, bool trials_may_resume) {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(experiment.checkpoint_root);
  if (!storage.ok()) {
    Notice(absl::StrCat("warning: ", storage.status().message()));
    return;
  }
  for (std::string& warning : ApplyRecordRetention(
           experiment.config.checkpoint_storage, experiment.config.searcher.smaller_is_better,
           trials_may_resume, **storage, &experiment.record)) {
    Notice(std::move(warning));
  }
}

void Orchestrator::EndTrial(Trial& trial, TrialState state, absl::string_view error) {
  trial.lifecycle.End(state);  // no change where its lifecycle already ended it
  if (!error.empty()) trial.error = std::string(error);
  Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  Event(absl::StrCat("trial ", trial.id, " (experiment ", experiment.id, ") ",
                     TrialStateName(trial.state()),
                     error.empty() ? std::string() : absl::StrCat(": ", error)),
        trial.state() == TrialState::kError ? OrchestratorEvent::Level::kNotice
                                            : OrchestratorEvent::Level::kDetail);
  experiment.dirty = true;
}

void Orchestrator::MaybeEndExperiment(Experiment& experiment) {
  if (experiment.replaying) return;
  if (!experiment.Going() && experiment.state != ExperimentState::kStopping) return;
  size_t completed = 0;
  size_t errored = 0;
  for (const auto& [request_id, trial_id] : experiment.trials) {
    const Trial& trial = *cluster_->trials.at(trial_id);
    if (trial.task_id != 0) return;
    if (experiment.Going() && !trial.ended()) return;
    completed += trial.state() == TrialState::kCompleted;
    errored += trial.state() == TrialState::kError;
  }
  if (experiment.state == ExperimentState::kStopping) {
    experiment.state = ExperimentState::kStopped;
  } else if (!experiment.searcher_done) {
    return;
  } else if (const char* failed = orchestration::TrialsFailedError(completed, errored)) {
    experiment.state = ExperimentState::kError;
    experiment.error = failed;
  } else {
    experiment.state = ExperimentState::kCompleted;
    // No trial resumes any more: save_trial_latest holds for the latest checkpoints too.
    ApplyRetention(experiment, /*trials_may_resume=*/false);
  }
  for (const auto& [request_id, trial_id] : experiment.trials) {
    Trial& trial = *cluster_->trials.at(trial_id);
    if (!trial.ended()) EndTrial(trial, TrialState::kStopped, "");
  }
  experiment.ended_unix = clock_.UnixSeconds();
  Event(absl::StrCat(
      "experiment ", experiment.id, " ", ExperimentStateName(experiment.state),
      experiment.error.empty() ? std::string() : absl::StrCat(": ", experiment.error)));
  Save(experiment);
}

}  // namespace cohort
