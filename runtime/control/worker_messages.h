// The messages of the worker <-> supervisor channel and their wire codec.
//
// A worker reports (WorkerHello first, then metrics, progress, checkpoints and heartbeats,
// TrialFinished last) and uses the trial's rendezvous store (RendezvousSet, RendezvousGet); the
// supervisor commands (StopCommand) and answers rendezvous gets (RendezvousValue). On the wire
// each is one FlatBuffers WorkerEnvelope (schemas/worker.fbs); decoding verifies the buffer
// before reading it, so any bytes from the network are safe to pass in.
//
//   std::string bytes = EncodeWorkerMessage(ProgressReport{.trial_id = 7, .batches = 100});
//   absl::StatusOr<WorkerMessage> message = DecodeWorkerMessage(bytes);
//   if (message.ok() && std::holds_alternative<ProgressReport>(*message)) { ... }
//
// The structs are plain values; == compares field by field (so a NaN never equals itself).
//
// Thread-safety: free functions without shared state.
#ifndef COHORT_RUNTIME_CONTROL_WORKER_MESSAGES_H_
#define COHORT_RUNTIME_CONTROL_WORKER_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/gpu/gpu_reading.h"

namespace cohort {

struct NamedValue {
  std::string name;
  double value = 0;

  friend bool operator==(const NamedValue&, const NamedValue&) = default;
};

enum class ReportKind { kTraining, kValidation };

// First message of every worker (also after a restart).
struct WorkerHello {
  uint64_t trial_id = 0;
  int64_t pid = 0;
  uint32_t rank = 0;
  uint64_t batches_trained = 0;
  uint64_t total_batches = 0;

  friend bool operator==(const WorkerHello&, const WorkerHello&) = default;
};

// One rank's pace over a training report's interval, per batch trained: what the straggler scores
// are made of (TrialRunner gathers every rank's; the orchestrator warns about a slow one).
struct RankPace {
  uint32_t rank = 0;
  double compute_seconds = 0;  // inside the plugin's train_batch (forward and backward)
  double step_seconds = 0;     // its own work: data, compute and the optimizer step (no waiting)
  double vs_fastest = 1;       // the fastest rank's step_seconds over this rank's: 1 the fastest
  double vs_best = 1;          // this rank's best step_seconds in the attempt over its current one

  friend bool operator==(const RankPace&, const RankPace&) = default;
};

struct MetricsReport {
  uint64_t trial_id = 0;
  ReportKind kind = ReportKind::kTraining;
  uint64_t batches = 0;
  uint64_t records = 0;
  double unix_time = 0;
  std::vector<NamedValue> metrics;
  // Training reports: seconds the training thread spent per phase since the previous training
  // report (TrialPhaseTimingKey names them), with a gradient exchange also its thread's
  // "exchange" (collectives) and "codec" seconds; and records trained per second then.
  std::vector<NamedValue> timings = {};
  double records_per_second = 0;
  // Training reports with a gradient exchange: bytes this rank handed to its collectives since
  // the previous training report.
  uint64_t exchanged_bytes = 0;
  // Set by the orchestrator on a training report when it knows a 1-slot baseline (see
  // Orchestrator::ScalingBaseline), for metrics.jsonl; never sent by a worker or an agent.
  std::optional<double> scaling_efficiency = std::nullopt;
  // Training reports of a trial on GPUs: each GPU slot of the task on the agent that forwards the
  // report, added by that agent (never sent by a worker).
  std::vector<GpuReading> gpus = {};
  // Training reports of a trial of several ranks, from rank 0: every rank's pace, by rank.
  std::vector<RankPace> ranks = {};

  friend bool operator==(const MetricsReport&, const MetricsReport&) = default;
};

struct ProgressReport {
  uint64_t trial_id = 0;
  uint64_t batches = 0;
  uint64_t total_batches = 0;
  uint64_t records = 0;
  double latest_loss = 0;
  double records_per_second = 0;

  friend bool operator==(const ProgressReport&, const ProgressReport&) = default;
};

// A checkpoint written (`id` names it and is not empty), or, with `restored`, the one an attempt
// resumed from because the newer checkpoints it was given are damaged: then its reports after
// `batches` are trained again. A restored report with an empty `id` and 0 batches says no whole
// checkpoint was left and the attempt starts from the beginning.
struct CheckpointReport {
  uint64_t trial_id = 0;
  std::string id;
  uint64_t batches = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  bool restored = false;

  friend bool operator==(const CheckpointReport&, const CheckpointReport&) = default;
};

enum class TrialExit { kCompleted, kStopped, kFailed };

// The exit status of a worker whose trial failed in a way every attempt would (the config, the
// plugin's contract, the metric names, a full disk): the trial is not restarted. Other failures
// exit 1.
inline constexpr int kPermanentFailureExitCode = 3;
// The exit status of a worker whose trial failed in a collective with the other ranks
// (CollectiveFailure: a peer's closed connection, a timed-out exchange), often another rank's
// failure seen from here: restarted as exit 1 is, but named after a rank that failed on its own.
inline constexpr int kCollectiveFailureExitCode = 4;

// Last message of a worker.
struct TrialFinished {
  uint64_t trial_id = 0;
  TrialExit exit = TrialExit::kCompleted;
  uint64_t batches = 0;
  std::string message;
  int32_t rank = -1;  // the sender's; -1 when not said

  friend bool operator==(const TrialFinished&, const TrialFinished&) = default;
};

// The largest rendezvous value the channel carries (NCCL ids, Gloo addresses, fingerprints).
inline constexpr size_t kMaxRendezvousValueBytes = size_t{1} << 20;

// Stores `value` (bytes, at most kMaxRendezvousValueBytes) under `key`, replacing an earlier value.
struct RendezvousSet {
  std::string key;
  std::string value;

  friend bool operator==(const RendezvousSet&, const RendezvousSet&) = default;
};

// Asks for `key`; the answer is a RendezvousValue with the same `request_id`.
struct RendezvousGet {
  std::string key;
  uint64_t request_id = 0;

  friend bool operator==(const RendezvousGet&, const RendezvousGet&) = default;
};

// The training loop of `rank` is moving: it had trained `batches_trained` batches at `unix_time`
// (the worker's wall clock, seconds since the epoch). A heartbeat from a worker built before
// batches_trained existed decodes with 0 there.
// A worker sends a Heartbeat right after its WorkerHello, then from its training loop once this
// long has passed since the last one: about once per interval while the loop moves, never more.
inline constexpr double kHeartbeatIntervalSeconds = 1.0;

struct Heartbeat {
  uint64_t trial_id = 0;
  uint32_t rank = 0;
  double unix_time = 0;
  uint64_t batches_trained = 0;

  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};

using WorkerMessage = std::variant<WorkerHello, MetricsReport, ProgressReport, CheckpointReport,
                                   TrialFinished, RendezvousSet, RendezvousGet, Heartbeat>;

// Never fails. A CheckpointReport with an empty id, or a RendezvousSet with a value larger than
// kMaxRendezvousValueBytes, encodes, but DecodeWorkerMessage rejects it.
std::string EncodeWorkerMessage(const WorkerMessage& message);

// INVALID_ARGUMENT for anything the Verifier rejects, another format version, a message type this
// build does not know (a command included), missing required fields (an empty checkpoint id
// included), enum values out of range or rendezvous values over kMaxRendezvousValueBytes. Never
// crashes, whatever the bytes.
absl::StatusOr<WorkerMessage> DecodeWorkerMessage(absl::string_view bytes);

// Supervisor -> worker: checkpoint at the next batch boundary and exit.
struct StopCommand {
  std::string reason;

  friend bool operator==(const StopCommand&, const StopCommand&) = default;
};

// Answers the RendezvousGet with the same `request_id`: `found` is false (and `value` empty)
// while nobody has set `key`.
struct RendezvousValue {
  uint64_t request_id = 0;
  std::string key;
  bool found = false;
  std::string value;

  friend bool operator==(const RendezvousValue&, const RendezvousValue&) = default;
};

using WorkerCommand = std::variant<StopCommand, RendezvousValue>;

// Never fails; DecodeWorkerCommand rejects a RendezvousValue over kMaxRendezvousValueBytes.
std::string EncodeWorkerCommand(const WorkerCommand& command);

// INVALID_ARGUMENT as for DecodeWorkerMessage; a worker message is rejected here.
absl::StatusOr<WorkerCommand> DecodeWorkerCommand(absl::string_view bytes);

// "WorkerHello", "StopCommand", ...: how logs and errors name a message.
absl::string_view WorkerMessageName(const WorkerMessage& message);
absl::string_view WorkerCommandName(const WorkerCommand& command);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_WORKER_MESSAGES_H_
