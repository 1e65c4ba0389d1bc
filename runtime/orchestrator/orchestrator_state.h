// The Orchestrator's records of agents, experiments, trials and tasks (a Cluster), shared by its
// source files (orchestrator.cc: its start and time; orchestrator_trials.cc: experiments, trials
// and tasks; orchestrator_agents.cc: agents' messages; orchestrator_clients.cc: clients'
// requests) and read by the queries over them (cluster_queries.h). Not for use outside the
// orchestrator.
//
// Thread-safety: plain values; as the Orchestrator's.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_STATE_H_
#define COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_STATE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/client/client_messages.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/trial_schedule.h"
#include "runtime/control/control_messages.h"
#include "runtime/orchestrator/agent_provisioner.h"
#include "runtime/orchestrator/placement.h"
#include "runtime/orchestrator/straggler_watch.h"
#include "runtime/orchestrator/task_ending.h"
#include "runtime/orchestrator/trial_lifecycle.h"
#include "runtime/orchestrator/trial_log.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/run_folder.h"
#include "runtime/search/searcher.h"

namespace cohort {

namespace orchestration {

// How long an agent is held back after its `refusals`-th refusal in a row for want of slots: 1 s,
// doubling, at most 30 s.
inline double RefusalHoldSeconds(uint32_t refusals) {
  return refusals == 0 ? 0.0 : refusals > 5 ? 30.0 : static_cast<double>(1u << (refusals - 1));
}

// Why an experiment whose searcher is done ends in error: none of its trials completed and
// `errored` of them failed ("its trial failed", "every trial failed"); nullptr where it completed
// (a trial completed, or none failed: every one was stopped).
inline const char* TrialsFailedError(size_t completed, size_t errored) {
  if (completed > 0 || errored == 0) return nullptr;
  return errored == 1 ? "its trial failed" : "every trial failed";
}

// One agent as the orchestrator knows it. `busy` holds the slots of tasks the orchestrator
// placed there and whose part on the agent has not ended.
struct Agent {
  std::string id;
  std::string hostname;
  std::vector<AgentSlot> slots;
  std::map<uint32_t, SlotUser> busy;
  // Tasks it held at its AgentHello that this orchestrator does not know of (from before a restart)
  // and told it to kill: their ranks still to exit. Their slots stay in `busy` until the last one's
  // TaskExit, so nothing is placed where the agent would refuse it.
  std::map<uint64_t, std::set<int32_t>> leftover_ranks;
  bool connected = false;
  // It stopped a task on its own (it is shutting down): no new task is placed there until its
  // next AgentHello.
  bool draining = false;
  // It refused StartTasks for want of slots `slot_refusals` times in a row (its state and the
  // orchestrator's disagree, or it is shutting down): no task is placed there before `held_until`
  // (monotonic seconds). The hold doubles with each refusal, from 1 s to 30 s; a StartTask it
  // accepts, or its AgentHello, ends the run of refusals.
  uint32_t slot_refusals = 0;
  double held_until = 0;
  bool HeldBack(double now) const { return now < held_until; }
  double last_seen = 0;  // monotonic seconds
  double last_seen_unix = 0;
};

struct Experiment {
  uint64_t id = 0;
  ExperimentConfig config;
  // TrainingFingerprint of `config` with slots_per_trial 1: experiments equal in it compare their
  // throughput (ScalingBaseline). Set with `config`.
  std::string one_slot_fingerprint;
  std::unique_ptr<Searcher> searcher;
  ExperimentState state = ExperimentState::kActive;
  std::string error;
  std::map<uint64_t, uint64_t> trials;  // searcher request id -> trial id
  bool searcher_done = false;           // Shutdown was emitted
  double submitted_unix = 0;
  double ended_unix = 0;
  std::optional<RunFolder> folder;
  ExperimentRecord record;
  std::string checkpoint_root;
  bool resume = false;  // its trials continue from their latest checkpoints (LocalSubmission)
  // Its searcher counts lengths in records, not batches (SearcherMaxLength): its trials' batch
  // sizes differ.
  bool searcher_counts_records = false;
  std::deque<uint64_t> recorded_trial_ids;  // ids its next trials take (a recovered experiment)
  // A recovered experiment's trials that its record says were killed or failed, by id: they stay
  // so, rather than training again (its searcher hears they exited early).
  std::map<uint64_t, TrialRecord> ended_trials;
  // While a resumed experiment's searcher hears its recorded events again (ReplaySearcherEvents):
  // no task is created and the experiment does not end, and the ended trials whose exits are
  // among those events (by id) are told as the replay reaches them, not when created.
  bool replaying = false;
  std::set<uint64_t> exits_to_replay;
  bool dirty = false;  // record changed since the last Save
  double last_save = 0;

  // Not ended: active, or paused (its trials wait; its searcher still hears their ends).
  bool Going() const {
    return state == ExperimentState::kActive || state == ExperimentState::kPaused;
  }
  bool Ended() const { return ExperimentEnded(state); }
};

struct Trial {
  explicit Trial(size_t log_capacity) : log(log_capacity) {}

  uint64_t id = 0;
  uint64_t experiment_id = 0;
  uint64_t request_id = 0;
  Hyperparameters hparams;
  std::string hparams_json;
  TrialLifecycle lifecycle;        // its stage; changed only through its events
  uint64_t global_batch_size = 0;  // its hyperparameters'
  uint64_t target_units = 0;       // of the latest TrainTrial, in its searcher's unit
  uint64_t target_batches = 0;     // the same in this trial's batches
  uint64_t batches_trained = 0;
  uint64_t records_trained = 0;  // from its latest progress (back on a rewind)
  uint64_t exchanged_bytes = 0;  // the sum of its training reports', over every attempt
  uint32_t restarts = 0;
  uint32_t attempts = 0;  // tasks created so far; the next task's attempt number
  uint64_t task_id = 0;
  std::string latest_checkpoint_id;
  uint64_t latest_checkpoint_batches = 0;
  std::optional<double> segment_metric;  // searcher metric validated at target_batches
  // A resumed trial's searcher metric at each validation kept from before its resume point (by
  // batches): ValidatedTarget finds a target's there when a later validation is the latest.
  std::map<uint64_t, double> resumed_validations;
  std::string error;
  TrialLog log;
  // Its latest failed task of several ranks, and those of its ranks that ended outside Cohort
  // (TaskEnding::ended_outside): what its flight diagnosis names as the cause, again when asked
  // after the task is gone (`cohort trial diagnose`). 0 while none failed.
  uint64_t failed_task_id = 0;
  std::map<uint32_t, std::string> failed_task_ended_outside;
  bool told_nan_metric = false;  // its searcher metric was validated NaN, and that was said
  bool told_nonfinite_loss = false;  // a training loss was NaN or infinite, and that was said
  // An earlier task's reports (sent again by its agent) were recorded, and that was said.
  bool told_earlier_reports = false;

  // What it trained, in its searcher's unit (batches, or records: Experiment's
  // searcher_counts_records, each batch the records its `slots` train).
  uint64_t UnitsTrained(bool counts_records, uint32_t slots) const {
    return counts_records ? batches_trained * RecordsPerBatch(global_batch_size, slots)
                          : batches_trained;
  }
  TrialState state() const { return lifecycle.state(); }
  bool ended() const { return lifecycle.ended(); }

  // Ended as `recorded` says (a trial of a stored record): its state (COMPLETED, ERROR, else
  // STOPPED), target, batches, restarts, error and latest checkpoint.
  void EndAsRecorded(const TrialRecord& recorded) {
    lifecycle.End(recorded.state == RunState::kCompleted ? TrialState::kCompleted
                  : recorded.state == RunState::kError   ? TrialState::kError
                                                         : TrialState::kStopped);
    target_batches = recorded.total_batches;
    batches_trained = recorded.batches_trained;
    restarts = recorded.restarts;
    error = recorded.error;
    if (!recorded.checkpoints.empty()) {
      latest_checkpoint_id = recorded.checkpoints.back().id;
      latest_checkpoint_batches = recorded.checkpoints.back().batches;
    }
  }
};

struct Task {
  uint64_t id = 0;
  uint64_t trial_id = 0;
  uint64_t experiment_id = 0;
  uint32_t slots = 0;
  uint32_t attempt = 0;
  std::string resume_checkpoint_id;
  TaskRowState state = TaskRowState::kQueued;
  std::string waiting_reason;
  double queued_unix = 0;
  double launched_at = 0;  // monotonic
  std::map<std::string, AgentPart> parts;
  TaskFlags flags;  // what the orchestrator knew of it: running, stopping, lost, its failure
  // How much flags.failure is the cause, where a rank's exit set it (OnTaskExit); kNone where
  // nothing did or something else did (then nothing is named before it).
  FailureBlame failure_blame = FailureBlame::kNone;
  bool gpus_unbalanced = false;  // its latest training report's GPUs, across agents, were uneven
  uint32_t told_log_lines = 0;   // its workers' warning and error lines heard (OnLogBatch)
  StragglerWatch stragglers;     // its ranks' paces, report after report
  // An elastic trial's task on fewer slots than its trial's, stopped to go on from its
  // checkpoint on this many (0: not growing).
  uint32_t grow_to = 0;
  // Under a provisioner: whether a job was asked for (its answer may still be on its way), the
  // job holding its agents ("" until the answer came), how many agents it starts, and its latest
  // known state.
  bool job_asked = false;
  std::string job_id;
  uint32_t job_agents = 0;
  JobState job_state;
};

// Everything the orchestrator knows, by id.
struct Cluster {
  std::map<std::string, std::unique_ptr<Agent>> agents;
  std::map<uint64_t, std::unique_ptr<Experiment>> experiments;
  std::map<uint64_t, std::unique_ptr<Trial>> trials;
  std::map<uint64_t, std::unique_ptr<Task>> tasks;
};

}  // namespace orchestration
}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_STATE_H_
