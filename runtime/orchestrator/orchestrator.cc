// The Orchestrator's life: starting on a state directory (taking over what an earlier one left),
// the events and queries around it, and the passing of time (lost agents, unanswered starts,
// placement, saving).
#include "runtime/orchestrator/orchestrator.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "runtime/orchestrator/cluster_queries.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort {
namespace {

constexpr double kSaveInterval = 1.0;

}  // namespace

Orchestrator::Orchestrator(OrchestratorOptions options, AgentOutbox& outbox, Clock& clock)
    : options_(std::move(options)),
      outbox_(outbox),
      clock_(clock),
      state_(options_.state_dir),
      cluster_(std::make_unique<orchestration::Cluster>()) {
  if (options_.provisioner != nullptr) {
    provisioner_calls_ = std::make_unique<ProvisionerCalls>(*options_.provisioner,
                                                            options_.provisioner_in_background);
  }
  if (options_.checkpoint_root.empty())
    options_.checkpoint_root = options_.state_dir + "/checkpoints";
  // Ids continue after the experiments, trials and tasks an earlier orchestrator left, so
  // folders and trial numbers never collide.
  next_experiment_id_ = state_.FirstFreeExperimentId();
  next_trial_id_ = state_.FirstFreeTrialId();
  next_task_id_ = first_task_id_ = state_.FirstFreeTaskId();
  RecoverExperiments();
}

void Orchestrator::RecoverExperiments() {
  absl::StatusOr<std::vector<std::string>> finished = state_.FinishInterruptedDeletes();
  if (!finished.ok()) {
    Notice(absl::StrCat("warning: ", finished.status().message()));
  } else {
    for (const std::string& folder : *finished) {
      Notice(absl::StrCat("finished an interrupted delete: removed ", folder));
    }
  }
  for (absl::StatusOr<StoredExperiment>& stored : state_.ReadExperiments()) {
    if (!stored.ok()) {
      Notice(absl::StrCat("warning: ", stored.status().message()));
      continue;
    }
    const uint64_t id = stored->id;
    const bool paused = stored->record.state == RunState::kPaused;
    if (stored->record.state != RunState::kActive && !paused) {
      AddEndedExperiment(*std::move(stored));
      continue;
    }
    if (stored->config.searcher.name == "adaptive_asha" && !stored->record.searcher_events_kept) {
      const std::string why =
          "adaptive_asha was active when the orchestrator stopped and cannot continue: its "
          "record was written before searcher events were kept, so its promotions are unknown; "
          "submit the experiment again";
      Notice(absl::StrCat("warning: experiment ", id, ": ", why));
      stored->record.state = RunState::kError;
      AddEndedExperiment(*std::move(stored), why);
      // Its record says so too (its trials stopped), as `describe` does, ending now.
      Experiment& ended = *cluster_->experiments.at(id);
      ended.ended_unix = clock_.UnixSeconds();
      Save(ended);
      continue;
    }
    Admission admission;
    admission.id = id;
    for (const TrialRecord& trial : stored->record.trials) {
      admission.trial_ids.push_back(trial.id);
      // A trial killed (`cohort trial kill`) or failed in an experiment that goes on.
      if (trial.state == RunState::kStopped || trial.state == RunState::kError) {
        admission.ended_trials.emplace(trial.id, trial);
      }
    }
    admission.config = std::move(stored->config);
    admission.folder = std::move(stored->folder);
    admission.resume = true;
    admission.paused = paused;
    admission.submitted_unix = stored->submitted_unix;
    admission.searcher_events = std::move(stored->record.searcher_events);
    const std::string path = admission.folder->path();
    const ClientMessage reply = Admit(std::move(admission));
    if (const auto* refused = std::get_if<ClientError>(&reply)) {
      Notice(absl::StrCat("warning: experiment ", id, " in ", path,
                          " is not loaded: ", refused->message));
      continue;
    }
    Notice(paused ? absl::StrCat("experiment ", id, " is paused: `cohort experiment activate ", id,
                                 "` continues it, each trial from its latest checkpoint")
                  : absl::StrCat("experiment ", id,
                                 " was active when the orchestrator stopped: it continues, each "
                                 "trial from its latest checkpoint"));
  }
}

void Orchestrator::AddEndedExperiment(StoredExperiment stored, absl::string_view error) {
  auto experiment = std::make_unique<Experiment>();
  const uint64_t id = stored.id;
  experiment->id = id;
  experiment->config = std::move(stored.config);
  experiment->one_slot_fingerprint = OneSlotFingerprint(experiment->config);
  switch (stored.record.state) {
    case RunState::kCompleted:
      experiment->state = ExperimentState::kCompleted;
      break;
    case RunState::kStopped:
      experiment->state = ExperimentState::kStopped;
      break;
    default: {
      experiment->state = ExperimentState::kError;
      experiment->error = std::string(error);
      if (!experiment->error.empty()) break;
      // One that ended as its trials failed says so again, as MaybeEndExperiment said it.
      const auto count = [&](RunState state) {
        return static_cast<size_t>(
            std::count_if(stored.record.trials.begin(), stored.record.trials.end(),
                          [state](const TrialRecord& trial) { return trial.state == state; }));
      };
      const char* failed =
          orchestration::TrialsFailedError(count(RunState::kCompleted), count(RunState::kError));
      experiment->error = stored.record.state == RunState::kError && failed != nullptr
                              ? failed
                              : "ended before the orchestrator restarted";
      break;
    }
  }
  experiment->submitted_unix = stored.submitted_unix;
  experiment->ended_unix = stored.saved_unix;
  experiment->folder = std::move(stored.folder);
  experiment->checkpoint_root = DefaultCheckpointRoot(experiment->config, id);
  experiment->searcher_done = true;
  uint64_t request_id = 0;
  for (const TrialRecord& recorded : stored.record.trials) {
    auto trial = std::make_unique<Trial>(options_.log_lines_in_memory);
    trial->id = recorded.id;
    trial->experiment_id = id;
    trial->request_id = ++request_id;
    trial->hparams_json = recorded.hyperparameters_json;
    trial->log.AppendRecorded(experiment->folder->log_path(recorded.id));
    trial->EndAsRecorded(recorded);
    experiment->trials[trial->request_id] = trial->id;
    cluster_->trials.emplace(trial->id, std::move(trial));
  }
  experiment->record = std::move(stored.record);
  cluster_->experiments.emplace(id, std::move(experiment));
}

void Orchestrator::Save(Experiment& experiment) {
  experiment.dirty = false;
  experiment.last_save = clock_.MonotonicSeconds();
  // The trials' states, restarts, targets and errors live in the Trials; the record takes them
  // here, once per save.
  experiment.record.state = RunStateOf(experiment.state);
  for (TrialRecord& record : experiment.record.trials) {
    if (const Trial* trial = FindTrial(record.id)) {
      record.state = RunStateOf(trial->state());
      record.restarts = trial->restarts;
      record.total_batches = trial->target_batches;
      record.error = trial->error;
      record.batches_trained = std::max(record.batches_trained, trial->batches_trained);
    }
  }
  if (absl::Status saved = WriteFileAtomically(experiment.folder->experiment_json_path(),
                                               experiment.record.ToJson());
      !saved.ok()) {
    Notice(absl::StrCat("warning: ", saved.message()));
  }
}

Orchestrator::~Orchestrator() {
  // The jobs asked for end with the orchestrator: a new one on the same state directory asks
  // for its own.
  for (auto& [id, task] : cluster_->tasks) ReleaseJob(*task);
}

std::string Orchestrator::MetricsPage() const {
  return orchestration::ClusterMetricsPage(*cluster_, clock_.MonotonicSeconds());
}

void Orchestrator::Event(std::string line, OrchestratorEvent::Level level) {
  events_.push_back(OrchestratorEvent{level, std::move(line)});
}

std::vector<OrchestratorEvent> Orchestrator::TakeEvents() { return std::exchange(events_, {}); }

bool Orchestrator::TaskSpansAgents(uint64_t task_id) const {
  auto task = cluster_->tasks.find(task_id);
  return task != cluster_->tasks.end() && task->second->parts.size() > 1;
}

std::vector<std::string> Orchestrator::TakeEndedRendezvousPrefixes() {
  return std::exchange(ended_rendezvous_prefixes_, {});
}

const ExperimentRecord* Orchestrator::RecordOf(uint64_t experiment_id) const {
  auto found = cluster_->experiments.find(experiment_id);
  return found == cluster_->experiments.end() ? nullptr : &found->second->record;
}

bool Orchestrator::Idle() const {
  if (!cluster_->tasks.empty() || timelines_.busy()) return false;
  for (const auto& [id, experiment] : cluster_->experiments) {
    if (!experiment->Ended()) return false;
  }
  return true;
}

Orchestrator::Trial* Orchestrator::FindTrial(uint64_t trial_id) {
  auto found = cluster_->trials.find(trial_id);
  return found == cluster_->trials.end() ? nullptr : found->second.get();
}

Orchestrator::Task* Orchestrator::FindTask(uint64_t task_id) {
  auto found = cluster_->tasks.find(task_id);
  return found == cluster_->tasks.end() ? nullptr : found->second.get();
}

std::vector<AgentView> Orchestrator::AgentViews(bool with_held) const {
  const double now = clock_.MonotonicSeconds();
  std::vector<AgentView> views;
  for (const auto& [id, agent] : cluster_->agents) {
    if (!agent->connected || agent->draining) continue;
    if (!with_held && agent->HeldBack(now)) continue;
    views.push_back(AgentView{id, static_cast<uint32_t>(agent->slots.size()), agent->busy});
  }
  return views;
}

bool Orchestrator::IsHeldBack(const std::string& agent_id) const {
  const auto found = cluster_->agents.find(agent_id);
  return found != cluster_->agents.end() && found->second->HeldBack(clock_.MonotonicSeconds());
}

std::string Orchestrator::AwayAgentsNote() const {
  const double now = clock_.MonotonicSeconds();
  std::string note;
  for (const auto& [id, agent] : cluster_->agents) {
    if (!agent->connected) continue;
    if (agent->draining) {
      absl::StrAppend(&note, "; ", id,
                      " is shutting down (it stopped its tasks on its own): no task goes there "
                      "until it registers again");
    } else if (agent->HeldBack(now)) {
      absl::StrAppend(&note, "; ", id, " refused a task for want of slots and is held back for ",
                      orchestration::RefusalHoldSeconds(agent->slot_refusals), " s");
    }
  }
  return note;
}

// ---------------------------------------------------------------- time

void Orchestrator::Tick() {
  const double now = clock_.MonotonicSeconds();
  for (auto& [id, agent] : cluster_->agents) {
    if (agent->connected && now - agent->last_seen > options_.agent_timeout_seconds) {
      LoseAgent(*agent,
                absl::StrCat("silent for ", static_cast<int>(now - agent->last_seen), " s"));
    }
  }
  std::vector<uint64_t> unanswered;
  for (const auto& [task_id, task] : cluster_->tasks) {
    if (task->state == TaskRowState::kQueued) continue;
    for (const auto& [agent_id, part] : task->parts) {
      if (!part.done && !part.acknowledged &&
          now - task->launched_at > options_.start_timeout_seconds) {
        unanswered.push_back(task_id);
        break;
      }
    }
  }
  for (const uint64_t task_id : unanswered) {
    Task& task = *cluster_->tasks.at(task_id);
    task.flags.agent_lost = true;
    if (task.flags.failure.empty()) task.flags.failure = "an agent did not answer its StartTask";
    StopTask(task, task.flags.failure, 0);
    std::vector<std::string> silent;
    for (const auto& [agent_id, part] : task.parts) {
      if (!part.acknowledged && !part.done) silent.push_back(agent_id);
    }
    for (const std::string& agent_id : silent) {
      if (EndPart(task, agent_id)) break;
    }
  }
  PlaceQueuedTasks();
  for (auto& [id, experiment] : cluster_->experiments) {
    if (experiment->dirty && now - experiment->last_save >= kSaveInterval) Save(*experiment);
  }
  ReportMergedTimelines();
}

void Orchestrator::ReportMergedTimelines() {
  for (const TimelineMerger::Done& done : timelines_.TakeDone()) {
    const uint64_t trial_id = done.request.trial_id;
    if (!done.status.ok()) {
      Notice(absl::StrCat("warning: trial ", trial_id, ": ", done.status.message()));
    } else if (done.files == 0) {
      Notice(absl::StrCat("warning: trial ", trial_id,
                          " has profiling enabled but left no "
                          "timeline in ",
                          done.request.checkpoint_root,
                          "/.timelines (the "
                          "checkpoint storage must be shared by the agents and the orchestrator)"));
    } else {
      Event(absl::StrCat("trial ", trial_id, ": timeline of ", done.files, " rank file",
                         done.files == 1 ? "" : "s", " in ", done.request.out_path),
            OrchestratorEvent::Level::kDetail);
    }
  }
}

}  // namespace cohort
