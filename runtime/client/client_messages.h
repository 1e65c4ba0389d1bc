// The client <-> orchestrator protocol: what `cohort submit`, `cohort experiment ...`, `cohort
// task list` and `cohort trial logs` ask the orchestrator, and its answers, as plain structs with
// their codec.
//
// A client sends one request and reads the reply whose header names that request: every request
// is answered by exactly one reply (its own reply type, or ClientError). On the wire each message
// is one FlatBuffers ClientEnvelope (schemas/client.fbs) carrying a ClientHeader; docs/protocol.md
// gives every field's meaning. Decoding verifies the buffer before reading it, so any bytes from
// the network are safe to pass in.
//
//   const ClientHeader header{/*message_id=*/1, /*correlation_id=*/0, "cohort-cli"};
//   std::string bytes = EncodeClientMessage(header, DescribeExperiment{3});
//   absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(bytes);
//   if (!decoded.ok()) { /* log decoded.status() and drop the message */ }
//   else if (const auto* describe = std::get_if<DescribeExperiment>(&decoded->message)) { ... }
//
// The structs are plain values; == compares field by field (so a NaN never equals itself).
//
// Thread-safety: free functions without shared state.
#ifndef COHORT_RUNTIME_CLIENT_CLIENT_MESSAGES_H_
#define COHORT_RUNTIME_CLIENT_CLIENT_MESSAGES_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

// The protocol version this build writes. Readers refuse another major and accept any minor.
inline constexpr uint16_t kClientProtocolMajor = 1;
inline constexpr uint16_t kClientProtocolMinor = 9;

// The enums' values are their wire values.
enum class ExperimentState : uint8_t {
  kActive = 0,     // trials are training or waiting for slots
  kStopping = 1,   // killed; its tasks are being stopped
  kCompleted = 2,  // the searcher finished and every trial ended
  kStopped = 3,    // killed, and every task has exited
  kError = 4,      // could not go on (every trial failed, or the searcher could not start)
  kPaused = 5,     // minor 4: paused by a user; no trial trains until it is activated
};

// What ChangeExperiment does (minor 4); the values are the wire's.
enum class ExperimentChangeKind : uint8_t {
  kPause = 0,
  kActivate = 1,
  kArchive = 2,
  kUnarchive = 3,
  kDelete = 4,
};
enum class TrialState : uint8_t {
  kQueued = 0,     // has training to do: waiting for slots or for max_concurrent_trials
  kRunning = 1,    // its task is placed on agents
  kPaused = 2,     // trained what it was asked; waiting for the searcher to say more
  kCompleted = 3,  // trained what its searcher asked and was closed
  kStopped = 4,    // its experiment was killed, or the searcher stopped it early
  kError = 5,      // failed more than max_restarts times
};
enum class ClientErrorCode : uint8_t {
  kUnspecified = 0,
  kUnsupportedVersion = 1,
  kInvalidRequest = 2,  // e.g. a config that does not validate (the message names the field)
  kNotFound = 3,        // no experiment or trial with that id
  kUnschedulable = 4,   // the experiment's trials can never fit the cluster (message says why)
};

// The envelope fields besides the version.
struct ClientHeader {
  uint64_t message_id = 0;      // non-zero, unique per sender (a counter from 1)
  uint64_t correlation_id = 0;  // the request's message_id in a reply, 0 in a request
  std::string sender;           // a client name ("cohort-cli"), or "orchestrator"

  friend bool operator==(const ClientHeader&, const ClientHeader&) = default;
};

struct ClientVersion {
  uint16_t major = 0;
  uint16_t minor = 0;

  friend bool operator==(const ClientVersion&, const ClientVersion&) = default;
};

// ---- requests (client -> orchestrator)

// Answered by ExperimentSubmitted, or ClientError (kInvalidRequest naming the field, or
// kUnschedulable saying why the trials can never be placed).
struct SubmitExperiment {
  // The experiment config as YAML; its `entrypoint` must be an absolute plugin path as the
  // agents' hosts see it (the CLI resolves it before sending).
  std::string config_yaml;

  friend bool operator==(const SubmitExperiment&, const SubmitExperiment&) = default;
};

// Answered by ExperimentList.
struct ListExperiments {
  bool include_archived = false;  // minor 4: archived experiments are left out unless set
  friend bool operator==(const ListExperiments&, const ListExperiments&) = default;
};

// Answered by ExperimentDescription, or ClientError kNotFound.
struct DescribeExperiment {
  uint64_t experiment_id = 0;

  friend bool operator==(const DescribeExperiment&, const DescribeExperiment&) = default;
};

// Stops every trial of the experiment. Answered by ClientAck (also when it has already ended),
// or ClientError kNotFound.
struct KillExperiment {
  uint64_t experiment_id = 0;

  friend bool operator==(const KillExperiment&, const KillExperiment&) = default;
};

// Answered by TaskListing.
struct ListTasks {
  friend bool operator==(const ListTasks&, const ListTasks&) = default;
};

// Answered by AgentTable.
struct ListAgents {
  friend bool operator==(const ListAgents&, const ListAgents&) = default;
};

// The trial's output lines after `after_sequence` (0: from the first), oldest first, at most
// `max_lines` (0: the orchestrator's limit). `rank` -1 means every rank. Answered by TrialLogs,
// or ClientError kNotFound. A client follows a trial by asking again from the last sequence it
// got until `trial_ended`.
struct TrialLogsRequest {
  uint64_t trial_id = 0;
  int32_t rank = -1;
  uint64_t after_sequence = 0;
  uint32_t max_lines = 0;

  friend bool operator==(const TrialLogsRequest&, const TrialLogsRequest&) = default;
};

// Minor 4. kPause: the experiment's running trials checkpoint and stop, and no trial trains
// until kActivate, when each goes on from its latest checkpoint. kArchive, kUnarchive: an ended
// experiment is left out of ExperimentList unless include_archived, or put back. kDelete: an
// ended experiment's run folder and checkpoint storage are removed and it is forgotten. Answered
// by ClientAck (also when there is nothing to change), ClientError kNotFound, or kInvalidRequest
// saying why the experiment's state refuses it (nothing changed).
struct ChangeExperiment {
  uint64_t experiment_id = 0;
  ExperimentChangeKind change = ExperimentChangeKind::kPause;
  friend bool operator==(const ChangeExperiment&, const ChangeExperiment&) = default;
};

// Minor 4. Stops one trial: its task checkpoints and exits, the trial ends stopped and its
// searcher goes on without it. Answered by ClientAck (also when it has already ended), or
// ClientError kNotFound.
struct KillTrial {
  uint64_t trial_id = 0;
  friend bool operator==(const KillTrial&, const KillTrial&) = default;
};

// Minor 4. Answered by TrialDescription, or ClientError kNotFound.
struct DescribeTrial {
  uint64_t trial_id = 0;
  friend bool operator==(const DescribeTrial&, const DescribeTrial&) = default;
};

// Minor 4. The checkpoints kept in storage of experiment `experiment_id`, or of trial `trial_id`
// alone when it is not 0 (experiment_id may then be 0). Answered by CheckpointListing, or
// ClientError kNotFound.
struct ListCheckpoints {
  uint64_t experiment_id = 0;
  uint64_t trial_id = 0;
  friend bool operator==(const ListCheckpoints&, const ListCheckpoints&) = default;
};

// ---- replies (orchestrator -> client)

struct ExperimentSubmitted {
  uint64_t experiment_id = 0;
  std::vector<std::string> warnings;  // e.g. ignored keys, a batch size remainder dropped

  friend bool operator==(const ExperimentSubmitted&, const ExperimentSubmitted&) = default;
};

struct ExperimentSummary {
  uint64_t experiment_id = 0;
  std::string name;
  ExperimentState state = ExperimentState::kActive;
  std::string searcher;  // single, grid, random, adaptive_asha
  double progress = 0;   // 0..1, the searcher's
  uint32_t slots_per_trial = 0;
  uint32_t trials = 0;         // created so far
  uint32_t active_trials = 0;  // queued, running or paused
  uint32_t completed_trials = 0;
  uint32_t errored_trials = 0;
  double submitted_unix_time = 0;
  double ended_unix_time = 0;  // 0 while not ended
  std::string error;           // why it is in kError
  bool archived = false;       // minor 4

  friend bool operator==(const ExperimentSummary&, const ExperimentSummary&) = default;
};

struct ExperimentList {
  std::vector<ExperimentSummary> experiments;  // ascending id

  friend bool operator==(const ExperimentList&, const ExperimentList&) = default;
};

struct TrialSummary {
  uint64_t trial_id = 0;    // unique in the orchestrator
  uint64_t request_id = 0;  // the searcher's number for it within the experiment (1, 2, ...)
  TrialState state = TrialState::kQueued;
  std::string hyperparameters_json;  // the trial's values, a JSON object
  uint64_t batches_trained = 0;
  uint64_t target_batches = 0;  // what its current (or last) searcher operation asked
  uint32_t restarts = 0;
  uint64_t task_id = 0;                       // its current task; 0 when none
  std::vector<NamedValue> latest_training;    // the last training report's metrics
  std::vector<NamedValue> latest_validation;  // the last validation report's metrics
  bool has_best_metric = false;
  double best_metric = 0;            // best searcher metric validated so far
  std::string latest_checkpoint_id;  // empty when none
  std::string error;                 // why it is in kError (or its last failure)

  // The last training report's seconds per phase (metrics.jsonl "timings") and its records/s.
  std::vector<NamedValue> latest_timings = {};
  double records_per_second = 0;
  // Against the 1-slot experiment `baseline_experiment_id` of the same training config (see
  // Orchestrator::ScalingBaseline): records_per_second / (slots x its records/s); 0 when no
  // baseline is known.
  double scaling_efficiency = 0;
  uint64_t baseline_experiment_id = 0;
  // The last training report's GPU readings (metrics.jsonl "gpus"); empty off GPUs.
  std::vector<GpuReading> latest_gpus = {};
  // Minor 6: the last training report's straggler scores (metrics.jsonl "ranks"); empty at one
  // slot.
  std::vector<RankPace> latest_ranks = {};
  // Minor 6: with optimizations.learning_rate_scaling, the built-in optimizer's learning rate on
  // the trial's slots; 0 otherwise.
  double scaled_learning_rate = 0;
  // Minor 7: the batches of the last training and validation reports (0 when none).
  uint64_t latest_training_batches = 0;
  uint64_t latest_validation_batches = 0;
  // Minor 8: the batches of best_metric (0 when none), and the trial's best checkpoint, the kept
  // one with the best searcher metric (ExperimentRecord::BestCheckpoint; empty when none is kept).
  uint64_t best_metric_batches = 0;
  std::string best_checkpoint_id = {};

  friend bool operator==(const TrialSummary&, const TrialSummary&) = default;
};

struct ExperimentDescription {
  ExperimentSummary summary;
  std::string config_yaml;  // as submitted
  std::string searcher_metric;
  bool smaller_is_better = true;
  std::vector<TrialSummary> trials;  // ascending trial id

  friend bool operator==(const ExperimentDescription&, const ExperimentDescription&) = default;
};

enum class TaskRowState : uint8_t {
  kQueued = 0,    // waiting for slots; `reason` says why
  kStarting = 1,  // placed, not every worker has said hello
  kRunning = 2,
  kStopping = 3,
};

// One row of `cohort task list`, as Determined's `det task list`.
struct TaskRow {
  uint64_t task_id = 0;
  uint64_t experiment_id = 0;
  uint64_t trial_id = 0;
  uint32_t slots = 0;
  TaskRowState state = TaskRowState::kQueued;
  std::vector<std::string> agents;  // where it runs, ascending; empty while queued
  std::string reason;               // why a queued task waits, in plain words; else empty
  double queued_unix_time = 0;
  std::string job;  // the batch system's job holding its agents (a Slurm job id); else empty

  friend bool operator==(const TaskRow&, const TaskRow&) = default;
};

struct TaskListing {
  std::vector<TaskRow> tasks;  // ascending task id

  friend bool operator==(const TaskListing&, const TaskListing&) = default;
};

struct AgentRow {
  std::string agent_id;
  std::string hostname;
  uint32_t slots = 0;
  uint32_t busy_slots = 0;
  bool connected = false;  // heard from within the heartbeat timeout
  double last_seen_unix_time = 0;
  std::vector<uint64_t> task_ids;

  friend bool operator==(const AgentRow&, const AgentRow&) = default;
};

struct AgentTable {
  std::vector<AgentRow> agents;  // ascending id

  friend bool operator==(const AgentTable&, const AgentTable&) = default;
};

struct TrialLogLine {
  uint64_t sequence = 0;  // from 1, in arrival order over the trial's whole life
  uint32_t rank = 0;
  uint32_t attempt = 0;  // 0 for the trial's first task, +1 for each later one
  bool stderr_stream = false;
  double unix_time = 0;
  std::string text;  // without its newline
  // (minor 9) The orchestrator's own line about the trial ("[cohort] task 4 trains to batch
  // 500 on node-1", a metrics report), of no rank: `rank` is 0 and means nothing then.
  bool orchestrator_line = false;

  friend bool operator==(const TrialLogLine&, const TrialLogLine&) = default;
};

struct TrialLogs {
  uint64_t trial_id = 0;
  std::vector<TrialLogLine> lines;
  bool trial_ended = false;  // the trial is over and every line has been sent

  friend bool operator==(const TrialLogs&, const TrialLogs&) = default;
};

// What the orchestrator found of a recorded checkpoint in storage (minor 7). kUnchecked: it
// could not look (an older orchestrator, or storage it cannot open).
enum class CheckpointCondition : uint8_t {
  kUnchecked = 0,
  kWhole = 1,    // manifest and files' sizes as recorded (checksums are the restore's to verify)
  kDamaged = 2,  // its folder is there, but not whole: a resume passes over it
  kMissing = 3,  // no folder of it in storage
};

// One checkpoint kept in storage (minor 4).
struct CheckpointRow {
  std::string checkpoint_id;
  uint64_t experiment_id = 0;
  uint64_t trial_id = 0;
  uint64_t batches = 0;  // batches trained when it was taken
  bool has_metric = false;
  double metric = 0;   // the searcher metric validated after the same batches, if has_metric
  std::string path;    // its folder, as the orchestrator's host sees it
  uint64_t bytes = 0;  // its files' size together
  CheckpointCondition condition = CheckpointCondition::kUnchecked;  // minor 7
  std::string problem;  // minor 7: what is wrong with a damaged or missing one
  friend bool operator==(const CheckpointRow&, const CheckpointRow&) = default;
};

struct CheckpointListing {
  std::vector<CheckpointRow> checkpoints;  // by trial, then batches, ascending
  friend bool operator==(const CheckpointListing&, const CheckpointListing&) = default;
};

// One validation of a trial (minor 4).
struct ValidationRow {
  uint64_t batches = 0;
  std::vector<NamedValue> metrics;
  friend bool operator==(const ValidationRow&, const ValidationRow&) = default;
};

// One trial, with every validation it reported and its checkpoints (minor 4).
struct TrialDescription {
  uint64_t experiment_id = 0;
  std::string experiment_name;
  std::string searcher_metric;
  bool smaller_is_better = true;
  TrialSummary trial;
  std::vector<ValidationRow> validations;  // ascending batches
  std::vector<CheckpointRow> checkpoints;  // ascending batches
  friend bool operator==(const TrialDescription&, const TrialDescription&) = default;
};

// Minor 6. The ranks' flight records of the trial's running task, or of its last task that left
// them; answered by TrialDiagnosis, or ClientError kNotFound.
struct DiagnoseTrial {
  uint64_t trial_id = 0;
  friend bool operator==(const DiagnoseTrial&, const DiagnoseTrial&) = default;
};

// Minor 6: what the flight records say (observe/flight_diagnosis.h's FlightDiagnosis).
struct TrialDiagnosis {
  uint64_t trial_id = 0;
  uint64_t task_id = 0;
  bool running = false;
  std::string summary;
  std::string collective;
  std::vector<uint32_t> entered;
  std::vector<uint32_t> missing;
  std::vector<uint32_t> silent;
  std::vector<std::string> ranks;
  std::string record_path;
  friend bool operator==(const TrialDiagnosis&, const TrialDiagnosis&) = default;
};

// The request named by the header's correlation_id was carried out.
struct ClientAck {
  friend bool operator==(const ClientAck&, const ClientAck&) = default;
};

// The request named by the header's correlation_id was refused.
struct ClientError {
  ClientErrorCode code = ClientErrorCode::kUnspecified;
  std::string message;

  friend bool operator==(const ClientError&, const ClientError&) = default;
};

// In the schema union's order; the members from ChangeExperiment on came with minor 4,
// DiagnoseTrial and TrialDiagnosis with minor 6.
using ClientMessage =
    std::variant<SubmitExperiment, ListExperiments, DescribeExperiment, KillExperiment, ListTasks,
                 ListAgents, TrialLogsRequest, ExperimentSubmitted, ExperimentList,
                 ExperimentDescription, TaskListing, AgentTable, TrialLogs, ClientAck, ClientError,
                 ChangeExperiment, KillTrial, DescribeTrial, ListCheckpoints, TrialDescription,
                 CheckpointListing, DiagnoseTrial, TrialDiagnosis>;

struct DecodedClient {
  ClientVersion version;  // the sender's protocol version
  ClientHeader header;
  ClientMessage message;

  friend bool operator==(const DecodedClient&, const DecodedClient&) = default;
};

// The envelope of `message` with `header` and this build's protocol version. Never fails.
std::string EncodeClientMessage(const ClientHeader& header, const ClientMessage& message);

// INVALID_ARGUMENT, naming what was wrong, for: bytes the Verifier rejects, a protocol major
// other than kClientProtocolMajor (naming both versions), a message type or enum value this build
// does not know, a message_id of 0 or an empty sender. A newer minor is accepted. Never crashes,
// whatever the bytes.
absl::StatusOr<DecodedClient> DecodeClientMessage(absl::string_view bytes);

// `reply` as a client of protocol minor `minor` can read it: an experiment state that minor does
// not know (kPaused before minor 4) is given as kActive. Other replies pass unchanged.
void AdaptReplyForClientMinor(uint16_t minor, ClientMessage& reply);

// Whether the message is a request (client -> orchestrator).
bool IsClientRequest(const ClientMessage& message);

// "SubmitExperiment", "TaskListing", ...: the message's name in the schema.
absl::string_view ClientMessageName(const ClientMessage& message);

// Lower-case words for the CLI: "active", "completed", ... ; "queued", "running", ...
absl::string_view ExperimentStateName(ExperimentState state);
// Completed, stopped and error are the ends; active, stopping and paused are not.
bool ExperimentEnded(ExperimentState state);
// The same for a trial: completed, stopped and error; queued, running and paused are not.
bool TrialEnded(TrialState state);
// "pause", "activate", "archive", "unarchive", "delete".
absl::string_view ExperimentChangeName(ExperimentChangeKind change);
absl::string_view TrialStateName(TrialState state);
absl::string_view TaskRowStateName(TaskRowState state);
// "whole", "damaged", "missing", "-" (unchecked).
absl::string_view CheckpointConditionName(CheckpointCondition condition);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CLIENT_CLIENT_MESSAGES_H_
