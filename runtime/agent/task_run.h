// TaskRun: one task's worker processes on this agent, supervised under the agent's libuv loop.
//
// Start prepares the task's run folder (<work_dir>/tasks/<task_id>/ with config.yaml, log.txt
// and, unless the StartTask names a checkpoint root, checkpoints/), binds the task's worker
// channel (a WorkerHub on loopback) and spawns one `cohort worker` per rank, each the leader of its
// own process group, its stdout and stderr read through pipes. The worker channel is answered as
// messages arrive (its notification fd is watched on the loop) and on every Poll. A task on this
// agent alone has its rendezvous served here, on the worker channel; the ranks of a task spanning
// agents meet at the StartTask's rendezvous endpoint instead (WorkerInvocationFor).
//
// What happens is told to the Listener: state changes (starting once spawned, running once every
// worker said hello, stopping while being killed), the workers' metrics and checkpoint reports as
// TaskMetricsReport / TaskCheckpointReport, their progress reports as TaskProgress (the first at
// once, then at most one per kProgressForwardSeconds, the newest; one held back goes out when its
// second is up, or before the exits), every output line, and finally, once every process has
// exited and its output is read, the TaskExits: one per rank, or one for the whole task (rank -1)
// when nothing could be spawned. A rank that fails (non-zero exit, signal) stops its siblings,
// which in lockstep could only wait for it, as Kill does with kPeerFailureGraceSeconds.
//
// Each rank's heartbeats are watched (HeartbeatMonitor) from its WorkerHello until its
// TrialFinished or the end of its process: a rank silent for silent_rank_warning_seconds is named
// in a LogStream::kAgent line "warning: rank 1 has sent no heartbeat for 30 s ...", and its next
// sign of life in a line "rank 1 is sending heartbeats again ...", each with the rank concerned
// and also written to the task's log.txt as "[agent] <text>". Signs of life are stamped with the
// time of the Poll that follows them.
//
// Listener calls come from Poll (call it every few milliseconds from the loop's thread) and from
// the loop's callbacks (the worker channel's watcher; the output pipes' reads, for output lines);
// never from Start or Kill. Progress and the agent's own lines come from Poll only.
//
//   std::unique_ptr<TaskRun> run = TaskRun::Start(loop, start, places, listener);
//   ...  // on a timer: run->Poll(now);
//   run->Kill("preempted", /*grace_seconds=*/30);
//   if (run->closed()) run.reset();   // every libuv handle of the task is closed
//
// Thread-safety: the thread running the loop only.
#ifndef COHORT_RUNTIME_AGENT_TASK_RUN_H_
#define COHORT_RUNTIME_AGENT_TASK_RUN_H_

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/agent/line_splitter.h"
#include "runtime/agent/progress_throttle.h"
#include "runtime/agent/rank_outcome.h"
#include "runtime/agent/worker_invocation.h"
#include "runtime/control/control_messages.h"
#include "runtime/control/heartbeat_monitor.h"
#include "runtime/control/rendezvous_service.h"
#include "runtime/control/worker_hub.h"

namespace cohort {

// How long the ranks of a task get to stop after one of them failed.
inline constexpr uint32_t kPeerFailureGraceSeconds = 5;

// What a TaskRun needs from the agent, besides the StartTask.
struct TaskRunSetup {
  std::string executable;                     // the `cohort` binary
  std::string work_dir;                       // the task's folder goes in <work_dir>/tasks/
  std::vector<AgentSlot> slots;               // the slots the task's ranks name
  std::vector<std::string> base_environment;  // "KEY=VALUE", inherited by every worker
  std::string advertise_address;  // the workers' COHORT_GLOO_HOSTNAME; "" leaves it unset
  // The agent's CURVE keys and the orchestrator's public key when the agent uses CURVE: the
  // workers of a task spanning agents present them to the rendezvous (WorkerInvocationFor).
  std::optional<CurveClientConfig> agent_curve;
  // A rank silent this long (seconds on Poll's clock) is named in a kAgent line.
  double silent_rank_warning_seconds = kSilentWarningSeconds;
  // Receives the task's notes for the agent's log, e.g. a dropped worker message (no newline).
  // Empty: stderr, "cohort agent: " prefix. Called on the loop's thread.
  std::function<void(absl::string_view line)> log;
  // The GPU readings of the given ranks since their previous call (GpuMonitor::Take), added to
  // each training report forwarded; unbalanced GPUs are named in a kAgent line. Empty: none.
  // Called on the loop's thread.
  std::function<std::vector<GpuReading>(const std::vector<RankAssignment>& ranks)> gpu_readings;
};

class TaskRun {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void OnTaskStatus(const TaskStatus& status) = 0;
    // A TaskMetricsReport, a TaskCheckpointReport or a TaskProgress.
    virtual void OnTaskReport(const ControlMessage& report) = 0;
    // A worker's output line (stream kStdout or kStderr, from the pipe readers), or a line the
    // agent wrote about the task (kAgent, from Poll).
    virtual void OnLogLine(uint64_t task_id, const LogLine& line) = 0;
    // Called once, last: every process of the task has ended.
    virtual void OnTaskExited(uint64_t task_id, const std::vector<TaskExit>& exits) = 0;
  };

  // Never fails: a task that cannot start ends with a TaskExit saying why. `loop` and `listener`
  // must outlive the TaskRun; `task` was admitted (its slots exist).
  static std::unique_ptr<TaskRun> Start(uv_loop_t* loop, const StartTask& task,
                                        const TaskRunSetup& setup, Listener& listener);

  // Ends a TaskRun only once closed().
  ~TaskRun();
  TaskRun(const TaskRun&) = delete;
  TaskRun& operator=(const TaskRun&) = delete;

  // Asks every worker to checkpoint and stop (StopCommand, and SIGTERM to its process group),
  // then SIGKILLs the groups still alive after `grace_seconds` (at once for 0). A later Kill may
  // shorten the grace period, never lengthen it. No effect once every process has exited.
  void Kill(absl::string_view reason, uint32_t grace_seconds);
  // Sends SIGCONT to every running rank's process group: the agent was continued, and its ranks,
  // which stop themselves while it is stopped, go on with it. Changes nothing of how they end.
  void Continue();

  // Serves the worker channel (rendezvous, hellos, reports), forwards the progress due, watches
  // the ranks' heartbeats and, once the processes are gone and their last messages in (or a
  // second passed), reports the exits. `now`: SystemClock's monotonic seconds (the progress
  // throttle also reads that clock as progress arrives), never decreasing from call to call. The
  // channel is also served as messages arrive; Poll is the fallback for missed wake-ups.
  void Poll(double now);

  uint64_t task_id() const { return task_.task_id; }
  uint64_t trial_id() const { return task_.trial_id; }
  // The ranks this agent runs.
  const std::vector<RankAssignment>& ranks() const { return task_.ranks; }
  // The longest silence at `now` among its ranks whose heartbeats are watched; nullopt if none is.
  std::optional<double> LongestSilence(double now) const;
  // Records trained, from its latest progress forwarded (nullopt before the first), and the bytes
  // its forwarded training reports say were exchanged, summed.
  std::optional<uint64_t> records_trained() const { return records_trained_; }
  uint64_t exchanged_bytes() const { return exchanged_bytes_; }
  TaskState state() const { return state_; }
  // The exits were reported and every libuv handle is closed.
  bool closed() const { return exits_reported_ && open_handles_ == 0; }

 private:
  struct Rank;
  struct OutputPipe {
    uv_pipe_t pipe;
    Rank* rank = nullptr;
    LogStream stream = LogStream::kStdout;
    LineSplitter splitter;
    bool open = false;
  };
  struct Rank {
    TaskRun* run = nullptr;
    RankAssignment assignment;
    uv_process_t process;
    OutputPipe out[2];  // stdout, stderr
    bool running = false;
    int64_t pid = 0;
    RankOutcome outcome;  // how its process ended, filled in as it goes
    bool said_hello = false;
    std::string peer;             // its worker channel routing id, once it said hello
    HeartbeatMonitor heartbeats;  // watches this rank alone: what it says is about this rank
    // Batches trained at its latest sign of life (hello, heartbeat) since the last Poll.
    std::optional<uint64_t> unstamped_beat;
    // The most batches its reports (metrics, progress) said it had trained.
    uint64_t reported_batches = 0;
  };

  TaskRun(uv_loop_t* loop, const StartTask& task, Listener& listener);

  // The run folder, config and worker channel; the reason when they cannot be made.
  absl::Status Prepare(const TaskRunSetup& setup);
  void Log(absl::string_view line) const;
  // Appends `line` and a newline to log.txt; a failed write closes it for good.
  void WriteToLogFile(absl::string_view line);
  // A line of the agent's about `rank`: to log.txt as "[agent] <text>", to the Listener as kAgent.
  void AgentLine(const Rank& rank, std::string text);
  // Stamps the signs of life since the last Poll with `now` and says which ranks fell silent or
  // came back.
  void WatchHeartbeats(double now);
  // The rank at `peer` said it had trained `batches` batches (a report): what a warning of its
  // silence names.
  void ReportedBatches(const std::string& peer, uint64_t batches);
  // Stops watching `rank`'s heartbeats: its silence from now on is expected.
  void StopWatching(Rank& rank);
  void ForwardProgress(std::optional<ProgressReport> progress);
  void SpawnAll(const TaskRunSetup& setup);
  // Handles every message waiting on the worker channel, then tells the pending statuses.
  void ServeWorkerChannel();
  void TellPendingStatuses();  // hands pending_statuses_ to the listener, oldest first
  absl::Status Spawn(Rank& rank, const WorkerInvocation& invocation);
  void Handle(const std::string& peer, const WorkerMessage& message);
  void SetState(TaskState state);
  void Signal(Rank& rank, int signal);
  void Close(uv_handle_t* handle);
  // Every spawned process exited and its output pipes closed.
  bool ProcessesGone() const;
  // Every rank that exited by itself has sent its TrialFinished.
  bool LastMessagesIn() const;
  // Reports the exits once the processes are gone and their last messages in (or a second
  // passed since they went): from Poll, and at once when a process exits or its output closes,
  // so a dead rank's restart does not wait for the agent's next tick.
  void ReportExitsIfGone(double now);
  void ReportExits();

  static void OnHubReadable(uv_poll_t* poll, int status, int events);
  static void OnExit(uv_process_t* process, int64_t exit_status, int term_signal);
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnGraceOver(uv_timer_t* timer);
  static void OnClosed(uv_handle_t* handle);

  uv_loop_t* loop_;
  StartTask task_;
  Listener& listener_;
  std::function<void(absl::string_view line)> log_;
  std::function<std::vector<GpuReading>(const std::vector<RankAssignment>&)> gpu_readings_;
  bool gpus_unbalanced_ = false;  // the latest training report's GPUs were unbalanced
  ProgressThrottle progress_;
  std::optional<uint64_t> records_trained_;
  uint64_t exchanged_bytes_ = 0;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::unique_ptr<WorkerHub> hub_;
  uv_poll_t hub_poll_;  // watches hub_'s notification fd while hub_watched_
  bool hub_watched_ = false;
  RendezvousService rendezvous_;
  int log_fd_ = -1;  // <run folder>/log.txt
  TaskState state_ = TaskState::kPending;
  std::vector<TaskStatus> pending_statuses_;  // told at the next Poll, or before the exits
  std::string start_error_;                   // why the task could not start at all
  std::string stop_reason_;
  uv_timer_t grace_timer_;
  double grace_deadline_ = 0;  // uv_now milliseconds when the grace period ends; 0: none
  double gone_since_ = -1;     // when ProcessesGone first held (Poll's clock)
  bool exits_reported_ = false;
  int open_handles_ = 0;
  char read_buffer_[64 * 1024];
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_TASK_RUN_H_
