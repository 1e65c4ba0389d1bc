// The orchestrator <-> agent control protocol: its messages as plain structs and their codec.
//
// An agent registers with AgentHello, then sends AgentHeartbeat, TaskStatus, TaskExit, forwarded
// metrics and checkpoint reports and LogBatch; the orchestrator sends StartTask, KillTask and
// TaskListRequest (answered by TaskList); requests are answered by Ack or ErrorReply. On the wire
// each message is one FlatBuffers ControlEnvelope (schemas/control.fbs) carrying a ControlHeader;
// docs/protocol.md gives every field's meaning and the sequences. Decoding verifies the buffer
// before reading it, so any bytes from the network are safe to pass in.
//
//   const ControlHeader header{/*message_id=*/12, /*correlation_id=*/0, "orchestrator"};
//   std::string bytes = EncodeControlMessage(header, KillTask{7, "preempted", 30});
//   absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(bytes);
//   if (!decoded.ok()) { /* log decoded.status() and drop the message */ }
//   else if (const auto* kill = std::get_if<KillTask>(&decoded->message)) { ... }
//
// The structs are plain values; == compares field by field (so a NaN never equals itself).
//
// Thread-safety: free functions without shared state.
#ifndef COHORT_RUNTIME_CONTROL_CONTROL_MESSAGES_H_
#define COHORT_RUNTIME_CONTROL_CONTROL_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

// The protocol version this build writes. Readers refuse another major and accept any minor.
inline constexpr uint16_t kControlProtocolMajor = 1;
inline constexpr uint16_t kControlProtocolMinor = 11;
// The first minor with TaskProgress and LogStream::kAgent: an agent sends them only to an
// orchestrator that said it speaks at least this minor.
inline constexpr uint16_t kControlMinorWithProgress = 1;
// The first minor whose TaskCheckpointReport has `restored`.
inline constexpr uint16_t kControlMinorWithRestoredCheckpoints = 5;
// The first minor whose orchestrator acknowledges each TaskMetricsReport and TaskCheckpointReport
// (an agent keeps them until then, to send again after a re-registration).
inline constexpr uint16_t kControlMinorWithAcknowledgedReports = 11;

// An agent id is printable text (no control characters) of at most this many bytes (a ZeroMQ
// routing id's most); a message with another is refused.
inline constexpr size_t kMaxAgentIdBytes = 255;

// Why `id` cannot be an agent id ("empty agent id", "agent id of 300 bytes; at most 255", "agent
// id holds a control character ..."), or nullopt when it can. An agent id goes into every log
// line about the agent, so no peer may forge a line (a newline) or fill the log with one name.
std::optional<std::string> AgentIdProblem(absl::string_view id);

// The value of ControlHeader::sender for messages from the orchestrator.
inline constexpr absl::string_view kOrchestratorSender = "orchestrator";

// The enums' values are their wire values.
enum class SlotKind : uint8_t { kCpu = 0, kGpu = 1 };
enum class TaskState : uint8_t {
  kPending = 0,   // accepted, not spawned yet
  kStarting = 1,  // processes spawned, not every worker has said hello
  kRunning = 2,   // every rank's worker has said hello
  kStopping = 3,  // being killed, or a rank failed and the others are being stopped
  kExited = 4,    // every process of the task on this agent has exited
};
enum class LogStream : uint8_t {
  kStdout = 0,
  kStderr = 1,
  kAgent = 2,  // (minor 1) a line the agent wrote about the task, e.g. that a rank fell silent
};
enum class ControlErrorCode : uint8_t {
  kUnspecified = 0,
  kUnsupportedVersion = 1,
  kNotRegistered = 2,  // the orchestrator does not know the agent: it must send AgentHello
  kUnknownTask = 3,
  kDuplicateTask = 4,
  kSlotUnavailable = 5,
  kInvalidRequest = 6,
};

// The envelope fields besides the version.
struct ControlHeader {
  uint64_t message_id = 0;      // non-zero, unique per sender (a counter from 1)
  uint64_t correlation_id = 0;  // the message_id this answers, 0 if none
  std::string sender;           // the agent id, or kOrchestratorSender

  friend bool operator==(const ControlHeader&, const ControlHeader&) = default;
};

struct ControlVersion {
  uint16_t major = 0;
  uint16_t minor = 0;

  friend bool operator==(const ControlVersion&, const ControlVersion&) = default;
};

struct KeyValue {
  std::string key;
  std::string value;

  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

struct AgentSlot {
  uint32_t index = 0;
  SlotKind kind = SlotKind::kCpu;
  int32_t device_id = -1;  // CUDA ordinal of a GPU slot; -1 for a CPU slot
  std::string name;        // "NVIDIA H100 80GB HBM3", "cpu"

  friend bool operator==(const AgentSlot&, const AgentSlot&) = default;
};

// A task an agent holds (AgentHello, TaskList).
struct TaskEntry {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
  uint64_t experiment_id = 0;
  TaskState state = TaskState::kPending;
  std::vector<uint32_t> slots;  // AgentSlot indices
  std::vector<uint32_t> ranks;

  friend bool operator==(const TaskEntry&, const TaskEntry&) = default;
};

// Agent -> orchestrator, first message; answered by Ack or ErrorReply. `agent_id` is non-empty
// and equals the header's sender.
struct AgentHello {
  std::string agent_id;
  std::string cohort_version;
  std::string hostname;
  std::vector<AgentSlot> slots;
  std::vector<TaskEntry> tasks;  // still held, exited ones whose TaskExit was not acked too

  friend bool operator==(const AgentHello&, const AgentHello&) = default;
};

// Agent -> orchestrator, every heartbeat interval; `agent_id` as in AgentHello.
// The GPU slots on one agent of a task whose rank 0 runs on another, over the interval since the
// previous heartbeat (each reading's utilization is the mean of that interval).
struct TaskGpuReadings {
  uint64_t task_id = 0;
  std::vector<GpuReading> gpus;

  friend bool operator==(const TaskGpuReadings&, const TaskGpuReadings&) = default;
};

struct AgentHeartbeat {
  std::string agent_id;
  double unix_time = 0;
  uint32_t busy_slots = 0;
  std::vector<uint64_t> running_task_ids;
  // Minor 4: the tasks here whose rank 0 runs on another agent, which forwards their reports.
  std::vector<TaskGpuReadings> task_gpus = {};
  // Minor 8: the agent is shutting down: no new task goes there, and with none running it is gone.
  bool departing = false;

  friend bool operator==(const AgentHeartbeat&, const AgentHeartbeat&) = default;
};

struct WorkerSpec {
  std::string plugin_path;  // non-empty
  std::string config_path;  // exactly one of config_path and config_yaml is non-empty
  std::string config_yaml;
  std::string checkpoint_root;
  std::string resume_checkpoint_id;  // empty: start from scratch
  // Minor 7: validate at the resumed checkpoint before training (it is at the trial's target and
  // the orchestrator has no validation there).
  bool validate_at_resume = false;
  // Minor 10: the trial's number within its experiment (its searcher's request id, from 1), which
  // its trial seed derives from; 0 (an older orchestrator): the trial id does.
  uint64_t trial_number = 0;

  friend bool operator==(const WorkerSpec&, const WorkerSpec&) = default;
};

struct RankAssignment {
  uint32_t rank = 0;
  uint32_t local_rank = 0;
  uint32_t slot_index = 0;

  friend bool operator==(const RankAssignment&, const RankAssignment&) = default;
};

struct RendezvousAddress {
  std::string endpoint;  // "tcp://10.0.0.5:29500"
  std::string prefix;    // prepended to every key

  friend bool operator==(const RendezvousAddress&, const RendezvousAddress&) = default;
};

// Orchestrator -> agent: spawn one worker per rank in `ranks`; answered by Ack or ErrorReply.
struct StartTask {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
  uint64_t experiment_id = 0;
  uint32_t attempt = 0;
  WorkerSpec worker;
  std::vector<RankAssignment> ranks;
  uint32_t world_size = 0;
  uint32_t cross_rank = 0;  // this agent's index among the trial's agents
  uint32_t cross_size = 0;  // agents the trial runs on
  RendezvousAddress rendezvous;
  std::vector<KeyValue> environment;

  friend bool operator==(const StartTask&, const StartTask&) = default;
};

// Orchestrator -> agent: stop the task, SIGKILL after `grace_seconds`; answered by Ack or
// ErrorReply.
struct KillTask {
  uint64_t task_id = 0;
  std::string reason;
  uint32_t grace_seconds = 0;

  friend bool operator==(const KillTask&, const KillTask&) = default;
};

struct RankProcess {
  uint32_t rank = 0;
  int64_t pid = 0;

  friend bool operator==(const RankProcess&, const RankProcess&) = default;
};

// Agent -> orchestrator, at every state change of a task.
struct TaskStatus {
  uint64_t task_id = 0;
  TaskState state = TaskState::kPending;
  std::vector<RankProcess> processes;

  friend bool operator==(const TaskStatus&, const TaskStatus&) = default;
};

// TaskExit::rank when the task ended as a whole (before any process ran).
inline constexpr int32_t kWholeTask = -1;

// Agent -> orchestrator: a rank's process (or the whole task) ended; answered by Ack.
struct TaskExit {
  uint64_t task_id = 0;
  int32_t rank = kWholeTask;  // >= kWholeTask
  int32_t exit_code = 0;      // meaningful when `signal` is 0
  int32_t signal = 0;
  std::string reason;
  bool killed_by_agent = false;
  // The rank's process was stopped (SIGSTOP, a debugger) when the agent came to kill it: the rank
  // the others of its task waited for.
  bool stopped = false;
  // Minor 9: the rank's process exited without telling how its trial ended (no TrialFinished: a
  // plugin that called exit(), a worker that lost its agent): a failure whatever its exit code,
  // and never a permanent one.
  bool unfinished = false;

  friend bool operator==(const TaskExit&, const TaskExit&) = default;
};

// Agent -> orchestrator: a worker's MetricsReport (worker_messages.h), forwarded with its task.
struct TaskMetricsReport {
  uint64_t task_id = 0;
  MetricsReport report;

  friend bool operator==(const TaskMetricsReport&, const TaskMetricsReport&) = default;
};

// Agent -> orchestrator: a worker's CheckpointReport, forwarded; `checkpoint_id` is non-empty,
// but for a restored report of the trial's start (CheckpointReport says what `restored` means).
struct TaskCheckpointReport {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
  std::string checkpoint_id;
  uint64_t batches = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  std::vector<KeyValue> metadata;
  bool restored = false;

  friend bool operator==(const TaskCheckpointReport&, const TaskCheckpointReport&) = default;
};

struct LogLine {
  uint32_t rank = 0;
  LogStream stream = LogStream::kStdout;
  double unix_time = 0;
  std::string text;  // without its newline

  friend bool operator==(const LogLine&, const LogLine&) = default;
};

// Agent -> orchestrator: worker output, in order per rank and stream.
struct LogBatch {
  uint64_t task_id = 0;
  std::vector<LogLine> lines;

  friend bool operator==(const LogBatch&, const LogBatch&) = default;
};

// Agent -> orchestrator (minor 1): a worker's ProgressReport, forwarded at most about once a
// second per task.
struct TaskProgress {
  uint64_t task_id = 0;
  ProgressReport progress;  // its trial_id is the task's trial

  friend bool operator==(const TaskProgress&, const TaskProgress&) = default;
};

// Orchestrator -> agent; answered by TaskList.
struct TaskListRequest {
  friend bool operator==(const TaskListRequest&, const TaskListRequest&) = default;
};

struct TaskList {
  std::vector<TaskEntry> tasks;

  friend bool operator==(const TaskList&, const TaskList&) = default;
};

// The request named by the header's correlation_id was accepted.
struct Ack {
  friend bool operator==(const Ack&, const Ack&) = default;
};

// The request named by the header's correlation_id was refused.
struct ErrorReply {
  ControlErrorCode code = ControlErrorCode::kUnspecified;
  std::string message;

  friend bool operator==(const ErrorReply&, const ErrorReply&) = default;
};

using ControlMessage = std::variant<AgentHello, AgentHeartbeat, StartTask, KillTask, TaskStatus,
                                    TaskExit, TaskMetricsReport, TaskCheckpointReport, LogBatch,
                                    TaskListRequest, TaskList, Ack, ErrorReply, TaskProgress>;

struct DecodedControl {
  ControlVersion version;  // the sender's protocol version
  ControlHeader header;
  ControlMessage message;

  friend bool operator==(const DecodedControl&, const DecodedControl&) = default;
};

// The envelope of `message` with `header` and this build's protocol version. Never fails; what
// DecodeControlMessage refuses (a message_id of 0, an empty sender or required id) still encodes.
std::string EncodeControlMessage(const ControlHeader& header, const ControlMessage& message);

// INVALID_ARGUMENT, naming what was wrong, for: bytes the Verifier rejects (a missing required
// field included), a protocol major other than kControlProtocolMajor (naming both versions), a
// message type or enum value this build does not know (from a newer minor: the caller logs and
// drops the message), a message_id of 0, an empty sender, agent id or checkpoint id, an agent id
// other than the sender, or a TaskExit rank below kWholeTask. A newer minor is accepted (fields
// this build does not know are ignored). Never crashes, whatever the bytes.
absl::StatusOr<DecodedControl> DecodeControlMessage(absl::string_view bytes);

// "StartTask", "Ack", ...: the message's name in the schema.
absl::string_view ControlMessageName(const ControlMessage& message);

// One short line for logs: "StartTask task 7 trial 3 ranks 0-1", "TaskExit task 7 rank 1 exit
// code 3", "ErrorReply unknown task: task 9 is not on this agent".
std::string DescribeControlMessage(const ControlMessage& message);

// "pending", "running", ...
absl::string_view TaskStateName(TaskState state);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_CONTROL_MESSAGES_H_
