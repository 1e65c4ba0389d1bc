// Orchestrator: the cluster's scheduler and bookkeeper. It registers agents, runs experiments
// through their searchers, turns each trial's training into tasks, places tasks on agents' slots,
// follows them to their end (restarting a failed trial from its latest checkpoint up to
// max_restarts) and answers clients.
//
// It is the logic only, driven by its caller: messages from agents (OnAgentMessage), requests from
// clients (OnClientRequest) and the passing of time (Tick). What it sends to agents goes through
// an AgentOutbox; time comes from a Clock; every experiment's record goes to a run folder under
// the state directory:
//
//   <state_dir>/experiments/<experiment id>/config.yaml        as submitted (seed included)
//   <state_dir>/experiments/<experiment id>/experiment.json    every trial's state and metrics
//   <state_dir>/experiments/<experiment id>/trials/<trial id>/metrics.jsonl, log.txt
//   <state_dir>/next_task_id                                    ids are never reused
//
// A trial is one searcher request. Its training happens in segments: each TrainTrial op becomes a
// task that trains the trial up to the op's batches (resuming from the trial's latest checkpoint),
// validates and exits; the validation's searcher metric goes back to the searcher. At most
// searcher.max_concurrent_trials trials of an experiment have a task at once. Tasks are placed in
// the order of their experiments' submission, then of their making (placement.h); one that cannot
// be placed yet waits with the reason.
//
// A new Orchestrator on a state directory continues the experiments an earlier one left active
// (RecoverExperiments), each trial from its latest checkpoint.
//
//   Orchestrator orchestrator(options, outbox, SystemClock());
//   orchestrator.OnAgentMessage("node-3", decoded);        // AgentHello: registered, Ack sent
//   ClientMessage reply = orchestrator.OnClientRequest(SubmitExperiment{yaml});
//   orchestrator.Tick();                                    // every few hundred milliseconds
//
// Thread-safety: not thread-safe; one thread drives it.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_H_
#define COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/base/clock.h"
#include "runtime/client/client_messages.h"
#include "runtime/config/experiment_config.h"
#include "runtime/control/control_messages.h"
#include "runtime/orchestrator/agent_provisioner.h"
#include "runtime/orchestrator/placement.h"
#include "runtime/orchestrator/provisioner_calls.h"
#include "runtime/orchestrator/state_directory.h"
#include "runtime/orchestrator/task_start.h"
#include "runtime/orchestrator/timeline_merger.h"
#include "runtime/orchestrator/trial_log.h"
#include "runtime/record/experiment_record.h"
#include "runtime/record/run_folder.h"
#include "runtime/search/searcher.h"

namespace cohort {

struct TaskEnding;  // task_ending.h

namespace orchestration {  // orchestrator_state.h
struct Agent;
struct Experiment;
struct Trial;
struct Task;
struct Cluster;
}  // namespace orchestration

// Where the orchestrator's messages to agents go (a ROUTER socket, or a test's list).
class AgentOutbox {
 public:
  virtual ~AgentOutbox() = default;
  // Sends `message` to the agent (answering `correlation_id`, 0 for none) and returns its
  // message id, unique over the orchestrator's life; 0 when it could not be sent.
  virtual uint64_t Send(const std::string& agent_id, const ControlMessage& message,
                        uint64_t correlation_id) = 0;
};

// A line the orchestrator asks its caller to log. A notice matters to whoever follows the trials
// (a failure and its restart, a resumption, a warning, a rank gone silent); a detail is the
// cluster's bookkeeping (registrations, placements, waiting reasons, experiments' ends).
struct OrchestratorEvent {
  enum class Level { kDetail, kNotice };
  Level level = Level::kDetail;
  std::string line;

  friend bool operator==(const OrchestratorEvent&, const OrchestratorEvent&) = default;
};

struct OrchestratorOptions {
  std::string state_dir;              // experiments/ goes here; created when missing
  std::string checkpoint_root;        // default storage root; "" is <state_dir>/checkpoints
  double agent_timeout_seconds = 15;  // an agent silent this long is lost
  double start_timeout_seconds = 30;  // a StartTask unanswered this long is placed again
  uint32_t kill_grace_seconds = 30;   // KillTask's grace for a killed experiment
  // Where the workers of a task spanning agents meet (a WorkerHub serving RendezvousService,
  // e.g. "tcp://10.0.0.5:29402"); StartTask.rendezvous names it for such tasks (and is empty
  // for a task on one agent, whose agent serves its rendezvous).
  std::string rendezvous_endpoint;
  // Lines of output kept in memory per trial for `cohort trial logs` (the file keeps them all).
  size_t log_lines_in_memory = 20000;
  // When set, the cluster keeps no agents of its own: each task gets a job of its own from the
  // provisioner (a Slurm job) and is placed on that job's agents alone (agent_provisioner.h).
  // Must outlive the Orchestrator, which cancels the jobs of its remaining tasks when destroyed.
  AgentProvisioner* provisioner = nullptr;
  // Whether the provisioner's commands run on a thread of their own (ProvisionerCalls), the
  // orchestrator taking their answers on later turns; false runs each at once (a test's
  // provisioner, which answers at once).
  bool provisioner_in_background = true;
  // How often the provisioner is asked for the states of the queued tasks' jobs.
  double job_poll_seconds = 1.0;
  // When set, asked of each AgentHello before the agent registers: an error refuses it (the agent
  // is answered ErrorReply InvalidRequest with its message, and the refusal is a notice), as
  // `cohort launch` takes its own ranks alone; the notice comes once per agent id. Called on the
  // orchestrator's thread.
  std::function<absl::Status(const std::string& agent_id)> admit_agent;
};

// An experiment submitted by the program embedding the orchestrator (`cohort run`) rather than
// by a client: its record goes to a run folder of the caller's choosing.
struct LocalSubmission {
  // Loaded and complete: entrypoint an absolute plugin path, experiment seed set.
  ExperimentConfig config;
  RunFolder folder;             // created, its config.yaml written
  std::string checkpoint_root;  // the experiment's checkpoint storage
  // Continue a stopped or failed run in `folder`: each trial starts from its latest whole
  // checkpoint in checkpoint_root, and its record from what was reported up to it
  // (ResumeTrialRecord); adaptive_asha's searcher hears again what the folder's experiment.json
  // says it was told (ReplaySearcherEvents: its promotions stand). Meant for the same config
  // and recorded seed, whose searcher creates the same trials in the same order.
  bool resume = false;
};

class Orchestrator {
 public:
  // What Submit refuses whatever the agents: a global batch smaller than slots_per_trial, a
  // max_length the orchestrator cannot count in batches, a searcher that cannot be created.
  // INVALID_ARGUMENT naming the field.
  static absl::Status CheckExperiment(const ExperimentConfig& config);
  // What Submit refuses of a checkpoint_storage.host_path, which every agent's worker and the
  // orchestrator must find as the same storage: a relative one (INVALID_ARGUMENT naming the key).
  static absl::Status CheckSharedHostPath(const ExperimentConfig& config);

  // `outbox` and `clock` must outlive the Orchestrator.
  Orchestrator(OrchestratorOptions options, AgentOutbox& outbox, Clock& clock);
  ~Orchestrator();
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

  // A message that arrived from the agent whose socket identity is `agent_id` (authenticated by
  // the caller where CURVE is on). A message whose sender differs from `agent_id`, or from an
  // agent that has not said hello, is answered with ErrorReply and otherwise ignored.
  void OnAgentMessage(const std::string& agent_id, const DecodedControl& message);

  // The reply to a client request (a reply type given as a request gets ClientError).
  ClientMessage OnClientRequest(const ClientMessage& request);

  // The reply to a read-only client request (describe, the lists, logs: QueryReply), changing
  // nothing; ClientError kInvalidRequest for any other.
  ClientMessage Query(const ClientMessage& request) const;

  // Stops experiment `experiment_id` as a KillExperiment does (each trial checkpoints and exits,
  // within kill_grace_seconds), its tasks' agents told `reason` ("the run was stopped"), as
  // `cohort run` stops on Ctrl-C.
  ClientMessage StopExperiment(uint64_t experiment_id, absl::string_view reason);

  // Admits `submission` as OnClientRequest admits a SubmitExperiment (ExperimentSubmitted, or the
  // ClientError a client would get), its record in submission.folder.
  ClientMessage SubmitLocal(LocalSubmission submission);

  // Notices lost agents and unanswered StartTasks, places waiting tasks, saves records.
  void Tick();
  // The orchestrator itself did not run for `seconds` (stopped, or starved of CPU): nothing it
  // could not hear meanwhile counts against its agents. Their silence and their StartTasks' wait
  // for an answer start over, so that the next Tick loses no agent the orchestrator has not had
  // the time to read; said in the log.
  void ExcuseOwnPause(double seconds);

  // The orchestrator's Prometheus page: agents (by connection state; each one's slots, busy
  // slots and heartbeat age), experiments and trials by state, tasks, and per trial its restarts
  // and bytes exchanged (counters), batches trained and, while running, records per second. See
  // docs/cluster.md.
  std::string MetricsPage() const;

  // The record of experiment `experiment_id` (what its experiment.json holds once saved), for a
  // program embedding the orchestrator; null for an unknown id.
  const ExperimentRecord* RecordOf(uint64_t experiment_id) const;

  // No experiment is active and no task exists (every experiment has ended).
  bool Idle() const;

  // What the caller should log (agents lost, trials failed, ...), oldest first; cleared by the
  // call.
  std::vector<OrchestratorEvent> TakeEvents();

  // The rendezvous key prefixes of the tasks spanning agents that ended since the last call: the
  // caller's rendezvous store may forget their keys.
  std::vector<std::string> TakeEndedRendezvousPrefixes();
  // Whether task `task_id` is placed and not yet over, with ranks on more than one agent: the
  // tasks whose workers meet at the orchestrator's rendezvous.
  bool TaskSpansAgents(uint64_t task_id) const;

 private:
  using Agent = orchestration::Agent;
  using Experiment = orchestration::Experiment;
  using Trial = orchestration::Trial;
  using Task = orchestration::Task;

  // ---- clients
  ClientMessage Submit(const SubmitExperiment& submit);
  // An experiment to add, however it came.
  struct Admission {
    ExperimentConfig config;
    std::optional<uint64_t> id;       // default: the next experiment id
    std::optional<RunFolder> folder;  // default: a new run folder under the state dir
    std::string checkpoint_root;      // default: <storage root>/experiment-<id>
    bool resume = false;              // see LocalSubmission::resume
    bool paused = false;              // admitted paused: no trial trains until activated
    std::deque<uint64_t> trial_ids;   // ids for its first trials, in creation order (recovery)
    std::map<uint64_t, TrialRecord> ended_trials;  // see Experiment::ended_trials (recovery)
    double submitted_unix = 0;                     // when it was first submitted (recovery); 0: now
    // What its searcher was told before (a resume or recovery: the record's), heard again before
    // anything trains (ReplaySearcherEvents) where the searcher DecidesFromResults.
    std::vector<SearcherEvent> searcher_events;
  };
  // Validates and adds an experiment.
  ClientMessage Admit(Admission admission);
  ClientMessage Kill(const KillExperiment& kill);
  // ChangeExperiment's changes (orchestrator_changes.cc).
  ClientMessage Change(const ChangeExperiment& change);
  ClientMessage Pause(Experiment& experiment);
  ClientMessage Activate(Experiment& experiment);
  ClientMessage Archive(Experiment& experiment, bool archived);
  ClientMessage Delete(Experiment& experiment);
  ClientMessage KillOneTrial(const KillTrial& kill);
  // The ranks' flight records of the trial's running or last failed task, gathered into its
  // folder and diagnosed (orchestrator_flight.cc).
  ClientMessage Diagnose(const DiagnoseTrial& request);
  // The storage root of experiment `id` under `config` when none was given: checkpoint_storage's
  // host_path (and storage_path), else the orchestrator's root, then experiment-<id>.
  std::string DefaultCheckpointRoot(const ExperimentConfig& config, uint64_t id) const;
  // The first experiment id from `first` whose DefaultCheckpointRoot is free for a new experiment
  // (CheckCheckpointRootFree: it holds nothing, or nothing but the claim of the experiment's own
  // folder); an error when none of the next thousand is.
  absl::StatusOr<uint64_t> IdWithFreeCheckpointRoot(const ExperimentConfig& config,
                                                    uint64_t first) const;

  // ---- agents
  void OnHello(const std::string& agent_id, uint64_t message_id, const AgentHello& hello);
  void OnTaskStatus(const std::string& agent_id, const TaskStatus& status);
  void OnTaskExit(const std::string& agent_id, uint64_t message_id, const TaskExit& exit);
  // A task's metrics report, recorded (RecordMetrics) unless it repeats one recorded; of a task
  // this orchestrator does not run, only up to its trial's latest checkpoint.
  void OnMetrics(const TaskMetricsReport& report);
  // Appends `metrics` to the trial's metrics.jsonl, TensorBoard events and log (as of
  // `attempt`), and applies it to the record and the searcher's view of the trial.
  void RecordMetrics(Experiment& experiment, Trial& trial, uint32_t attempt,
                     const MetricsReport& metrics);
  // Acks a TaskMetricsReport or TaskCheckpointReport from an agent that keeps them until then.
  void AcknowledgeReport(const std::string& agent_id, const DecodedControl& message);
  // An agent shutting down (its heartbeat says so): no new task goes there; with no task left
  // running there, it is gone at once rather than after its heartbeats stop.
  void OnDeparting(Agent& agent, const AgentHeartbeat& beat);
  // A training report's rank paces: a rank slow for kStragglerReports reports in a row is named,
  // with its agent, in the orchestrator's log and the trial's.
  void WarnOfStragglers(Task& task, const MetricsReport& report);
  void OnCheckpoint(const TaskCheckpointReport& report);
  // A worker passed over the trial's newest checkpoints as damaged and resumed from an older one
  // (or from the start): the record goes back to where it resumed, so nothing is reported twice.
  void OnRestoredOlderCheckpoint(Experiment& experiment, Trial& trial,
                                 const TaskCheckpointReport& report);
  // A task of the trial ended: a checkpoint of the trial newer than its latest recorded, whole in
  // storage but never reported (written in the background, its worker stuck or killed before
  // saying so), becomes its latest, as a report of it would have made it. The trial then goes on
  // from it, and the record names it, as a resume from the run folder would find it.
  void AdoptUnreportedCheckpoint(Experiment& experiment, Trial& trial);
  // Removes from storage, saying so, the trial's checkpoints after `restored_batches`, which its
  // worker passed over as damaged (a checkpoint is whole or absent).
  void RemovePassedOverCheckpoints(Experiment& experiment, const Trial& trial,
                                   uint64_t restored_batches);
  void OnProgress(const TaskProgress& progress);
  void OnLogBatch(const LogBatch& batch);
  void OnAnswer(const std::string& agent_id, uint64_t correlation_id, const ErrorReply* error);
  // The agent refused a StartTask for want of slots: it is held back from placement
  // (Agent::held_until) so the task placed again does not go straight back to be refused.
  void HoldBackAgent(Agent& agent, const ErrorReply& refusal);
  void LoseAgent(Agent& agent, absl::string_view why);
  // Frees the agent's slots held by a leftover task (Agent::leftover_ranks) once EXIT was its last
  // rank's; true when EXIT was a leftover's.
  bool ReleaseLeftover(Agent& agent, const TaskExit& exit);

  // ---- experiments, trials and tasks
  void Apply(Experiment& experiment, const std::vector<SearcherOp>& ops);
  void StartTasksWithinLimits(Experiment& experiment);
  void PlaceQueuedTasks();
  // An elastic trial's task that waits (`waits` says why) placed on fewer slots, the most that fit
  // among ElasticSlotCounts, applied to *views; nullopt when none fits (orchestrator_elastic.cc).
  std::optional<Placement> PlaceOnFewerSlots(Task& task, absl::string_view waits,
                                             std::vector<AgentView>* views);
  // With nothing queued: each elastic trial's task running on fewer slots than its trial's is
  // stopped after a checkpoint when more of them fit, to be placed again on them.
  void GrowElasticTasks();
  // Forgets the trial's task when it is still queued (the trial closed or stopped meanwhile).
  void DropQueuedTask(Trial& trial);
  // After a Close or Stop event took: a trial it ended (it had no placed task) drops its queued
  // task and ends in `end`; one whose task is placed has that task stopped for `reason`.
  void SettleStop(Trial& trial, TrialState end, absl::string_view reason);
  // Records why a queued task waits, and tells it as an event when the reason changed.
  void SetWaitingReason(Task& task, absl::string_view reason);

  // ---- tasks on a provisioner's jobs (orchestrator_provisioned.cc)
  // PlaceQueuedTasks with a provisioner: a job for each queued task that has none, the jobs'
  // states while they wait, and each task placed once its job's agents have all registered.
  void ProvisionQueuedTasks();
  // Asks for the queued tasks' jobs' states at most every job_poll_seconds (`force`: now), unless
  // an earlier ask is still unanswered.
  void PollJobStates(bool force);
  // Takes the provisioner's answers come since the last time: a submitted job goes to its task
  // (or is cancelled when the task is gone), a task whose job could not be had joins `failed`,
  // polled states go to the queued tasks, and a cancel that failed is told. True when a job was
  // submitted.
  bool TakeProvisionerAnswers(std::vector<uint64_t>& failed);
  // Whether agent `agent_id` may register: an agent of a job that serves a task; else why not.
  absl::Status CheckProvisionedAgent(absl::string_view agent_id) const;
  // The task is over or dropped: its job is cancelled and its agents forgotten.
  void ReleaseJob(Task& task);
  void Launch(Task& task, const Placement& placement);
  // The task's part on `agent_id` has ended: frees its slots; once every part has ended, the task
  // finishes. True when it did (`task` is destroyed then).
  bool EndPart(Task& task, const std::string& agent_id);
  // The task is over on every agent: decide what its trial does next. Destroys `task`.
  void Finish(Task& task);
  // A task of `ranks` ranks ended: a failed one's flight records are gathered into the trial's
  // folder and, where they show where the ranks parted, said at the end of `ending.failure`; a
  // task that ended well has its records removed.
  void SettleFlightRecords(const Experiment& experiment, Trial& trial, uint64_t task_id,
                           uint32_t ranks, TaskEnding& ending);
  // The trial trained to its TrainTrial's target: its validation goes to the searcher.
  void FinishSegment(Experiment& experiment, Trial& trial);
  // The searcher is told, and the record keeps in its searcher_events, that the trial validated
  // `units` (its target) with `metric` (NaN: none), or exited early; the ops it answers are
  // applied (orchestrator_searcher.cc).
  void TellSearcherValidated(Experiment& experiment, Trial& trial, uint64_t units, double metric);
  void TellSearcherExited(Experiment& experiment, Trial& trial);
  // A resumed experiment's searcher, just started, hears `events` (what it was told before) again
  // in order, so it takes the decisions it took, while no task starts: each validation is of a
  // trial waiting to train to that very target and resumed at or past it (it goes back to idle,
  // training nothing for it), each exit of a trial that stays ended. At the first event the
  // resumed trials do not bear out, the replay stops, says why, and the search goes on from
  // there. Then the ended trials whose exits it did not reach are told.
  void ReplaySearcherEvents(Experiment& experiment, const std::vector<SearcherEvent>& events);
  // Why `event` cannot be heard again now, or "" when it can.
  std::string ReplayMismatch(const Experiment& experiment, const SearcherEvent& event) const;
  // The trial trains again from its latest checkpoint: what was reported after it is forgotten,
  // in the record, in metrics.jsonl and in the TensorBoard events.
  void RewindTrial(Experiment& experiment, Trial& trial);
  // A trial of a resumed experiment starts from its latest checkpoint in the experiment's
  // storage, its record from what was reported up to it; it fails when storage cannot be read.
  void ResumeTrial(Experiment& experiment, Trial& trial);
  // The trial's searcher metric at its target, when it has trained to the target (its latest
  // checkpoint is there or past it) and its record holds the validation there: its next task
  // trains nothing more and validates nothing again. nullopt otherwise.
  std::optional<double> ValidatedTarget(const Experiment& experiment, const Trial& trial) const;
  void EndTrial(Trial& trial, TrialState state, absl::string_view error);
  // Deletes the checkpoints checkpoint_storage's save_* settings do not keep (warnings as
  // notices); with `trials_may_resume`, each trial's latest is kept whatever they say.
  void ApplyRetention(Experiment& experiment, bool trials_may_resume);
  void MaybeEndExperiment(Experiment& experiment);
  // Sends KillTask for every part not yet ended (once per task).
  void StopTask(Task& task, absl::string_view reason, uint32_t grace_seconds);
  void Save(Experiment& experiment);
  // "[cohort] `text`" in the trial's log (log.txt and `cohort trial logs`), as of `attempt`: how
  // its tasks start and end, among what its ranks print.
  void NoteInTrialLog(Trial& trial, uint32_t attempt, absl::string_view text);
  void Event(std::string line, OrchestratorEvent::Level level = OrchestratorEvent::Level::kDetail);
  void Notice(std::string line) { Event(std::move(line), OrchestratorEvent::Level::kNotice); }
  // Keeps each task's GPU readings from an agent that does not run its rank 0.
  void OnHeartbeat(const std::string& agent_id, const AgentHeartbeat& beat);
  // Adds the readings kept for `task` from its other agents to its training report `metrics`
  // (then forgets them), in rank order, and warns once when the GPUs of every agent together
  // are unbalanced.
  void AddOtherAgentsGpus(Task& task, MetricsReport& metrics);

  // Takes over the experiments an earlier orchestrator left in the state directory. One whose
  // experiment.json says ACTIVE continues: admitted again under its id from its config.yaml, its
  // trials keeping their ids and resuming from their latest checkpoints. An ended one is listed
  // and described as it ended. An adaptive_asha searcher hears again what its record says it was
  // told; an active adaptive_asha experiment whose record predates searcher events cannot
  // continue (its promotions are unknown): it is listed as ended in error, with a warning.
  void RecoverExperiments();
  // An experiment that ended before this orchestrator started, from its run folder; read only.
  // `error`: why it ended, when its record says neither completed nor stopped; by default, that
  // its trials failed where the record says so, else that it ended before this orchestrator
  // started. (The record of an adaptive_asha experiment RecoverExperiments ends is saved after.)
  void AddEndedExperiment(StoredExperiment stored, absl::string_view error = "");
  Trial* FindTrial(uint64_t trial_id);
  Task* FindTask(uint64_t task_id);
  // The connected agents that take tasks (not draining), as placement sees them. Agents held back
  // after refusing a StartTask for want of slots are left out unless `with_held`: they still
  // count for whether a trial can ever fit.
  std::vector<AgentView> AgentViews(bool with_held = false) const;
  // Why connected agents take no task now, each as "; agent-1 refused a task for want of slots and
  // is held back for 2 s" or "; agent-2 is shutting down ...", else "": what a waiting task's
  // reason adds.
  std::string AwayAgentsNote() const;
  // Whether the agent is held back now (Agent::held_until).
  bool IsHeldBack(const std::string& agent_id) const;
  // Logs the timeline merges carried out since the last call.
  void ReportMergedTimelines();

  OrchestratorOptions options_;
  AgentOutbox& outbox_;
  Clock& clock_;
  StateDirectory state_;
  std::unique_ptr<orchestration::Cluster> cluster_;  // agents, experiments, trials, tasks
  std::set<std::string> refusals_told_;  // the agents admit_agent refused, told once each
  std::deque<uint64_t> queue_;                       // task ids waiting for slots, oldest first
  uint64_t next_experiment_id_ = 1;
  uint64_t next_trial_id_ = 1;
  uint64_t next_task_id_ = 1;
  uint64_t first_task_id_ = 1;  // the first this orchestrator placed: a lower one a predecessor's
  std::vector<OrchestratorEvent> events_;
  std::vector<std::string> ended_rendezvous_prefixes_;
  double last_job_poll_ = -1;  // monotonic seconds of the provisioner's last States
  // With a provisioner: its commands, off this thread. Destroyed before the provisioner.
  std::unique_ptr<ProvisionerCalls> provisioner_calls_;
  // profiling.enabled: each trial's rank timelines, merged whenever one of its tasks ends.
  TimelineMerger timelines_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_H_
