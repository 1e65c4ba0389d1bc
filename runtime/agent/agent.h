// Agent: the daemon that runs on every machine, registers its slots with the orchestrator and
// runs the tasks it is given there (docs/protocol.md is the contract with the orchestrator).
//
// One libuv loop drives everything: the control connection (its ZMQ_FD watched by uv_poll and
// drained on a 20 ms timer as well), the tasks' worker channels (likewise: watched, and served on
// that timer), the workers' processes and output pipes, the heartbeat timer and SIGINT/SIGTERM.
//
// - Registration: AgentHello on start, again every 10 s until the orchestrator acknowledges it,
//   and again whenever it answers ErrorReply NotRegistered; then AgentHeartbeat every 5 s.
// - StartTask: admitted by the TaskTable (ErrorReply otherwise), acknowledged, then run as a
//   TaskRun; its statuses, reports, progress and exits are forwarded, its output and the agent's
//   lines about it (a silent rank; also in the agent's log) in LogBatch messages. A task spanning
//   agents is admitted when it names the rendezvous endpoint where its ranks meet (a wildcard
//   host there means the orchestrator's: ReachableRendezvousEndpoint); its workers publish
//   advertise_address to their Gloo peers (COHORT_GLOO_HOSTNAME).
// - TaskExit messages are kept until acknowledged and sent again after a re-registration; an
//   exited task is forgotten once all of its exits are acknowledged. So are a task's metrics and
//   checkpoint reports (UnackedReports), by an orchestrator of kControlMinorWithAcknowledgedReports
//   or later: sent again before the exits, so that a restarted orchestrator fills the trial's
//   record with what its predecessor missed.
// - KillTask stops a task (Ack, or ErrorReply UnknownTask for an id it never had); TaskListRequest
//   gets the TaskList.
// - Send only what the peer knows: the orchestrator's protocol minor comes from the envelope of
//   the Ack answering the latest AgentHello (0 before it, and again once the orchestrator says
//   NotRegistered); below kControlMinorWithProgress, TaskProgress is dropped and LogStream::kAgent
//   lines are left out of LogBatch (they stay in the task's log.txt). See KnownAtMinor.
// - SIGINT, SIGTERM or SIGHUP (or, for an embedded agent, AgentOptions::stop_requests) stops every
//   task as a KillTask with kShutdownGraceSeconds would (a second request kills them at once); Run
//   returns once every task has exited. A SIGHUP the agent was started ignoring (`nohup`) stays
//   ignored (HangupIgnored).
//
//   AgentOptions options;
//   options.orchestrator = "tcp://10.0.0.5:29400";
//   options.agent_id = "node-3";
//   options.slots = CpuSlots(8);
//   options.work_dir = "/var/lib/cohort-agent";
//   options.executable = "/usr/bin/cohort";
//   absl::Status status = Agent(options).Run();
//
// Thread-safety: Run owns the calling thread until it returns; the Agent is not thread-safe. Only
// *AgentOptions::stop_requests may be changed from another thread while Run runs.
#ifndef COHORT_RUNTIME_AGENT_AGENT_H_
#define COHORT_RUNTIME_AGENT_AGENT_H_

#include <uv.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/agent/gpu_monitor.h"
#include "runtime/agent/log_batcher.h"
#include "runtime/agent/orchestrator_connection.h"
#include "runtime/agent/task_folders.h"
#include "runtime/agent/task_run.h"
#include "runtime/agent/task_table.h"
#include "runtime/agent/unacked_reports.h"
#include "runtime/control/heartbeat_monitor.h"
#include "runtime/observe/metrics_endpoint.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

inline constexpr double kAgentHeartbeatSeconds = 5.0;
inline constexpr double kAgentHelloRetrySeconds = 10.0;
// How long an AgentHello goes unanswered on a connection that is up before the agent drops that
// connection and registers on a fresh one (the orchestrator may not hear it: see
// OrchestratorConnection::ConnectAfresh). Under the orchestrator's agent timeout (15 s), so that
// the agent is heard again before the orchestrator gives it up.
inline constexpr double kAgentUnheardHelloSeconds = 5.0;
// How long AgentHellos go unanswered before the agent says so in its log (and again each time as
// long again passes).
inline constexpr double kAgentUnansweredNoteSeconds = 30.0;
inline constexpr uint32_t kShutdownGraceSeconds = 10;
// How many forgotten (exited and acknowledged) task ids the agent remembers, so that a repeated
// KillTask is still acknowledged and a repeated StartTask still refused as a duplicate.
inline constexpr size_t kRememberedTaskIds = 1024;
// How long after its SIGCONT the agent sends SIGCONT to its workers again, and how often.
inline constexpr double kContinueWorkersSeconds = 2.0;
inline constexpr double kContinueWorkersEverySeconds = 0.5;

struct AgentOptions {
  std::string orchestrator;  // the orchestrator's ROUTER endpoint
  std::string agent_id;      // also the DEALER identity
  std::string hostname;
  std::string cohort_version;
  std::vector<AgentSlot> slots;
  std::string work_dir;    // tasks' run folders go in <work_dir>/tasks/<task_id>/
  std::string executable;  // the `cohort` binary the workers run
  std::vector<std::string> base_environment;  // "KEY=VALUE", what every worker inherits
  // The address of this host that other agents' workers reach (Gloo binds and publishes it).
  std::string advertise_address = "127.0.0.1";
  // When set, the control connection is a CURVE client with these keys; its key name must be
  // agent_id for the orchestrator to accept its messages.
  std::optional<CurveClientConfig> curve;
  // Receives each of the agent's log lines (no newline). Default: stderr, "cohort agent: " prefix.
  // Called on Run's thread only.
  std::function<void(absl::string_view line)> log;
  // When set, Run installs no signal handlers: each increase of *stop_requests acts as one
  // SIGINT would (the first stops every task with kShutdownGraceSeconds grace, the second kills
  // them at once); read on the loop's tick. Run returns once stopping and every task exited,
  // as after a signal. For a process that embeds the agent and handles signals itself. The count
  // starts from 0: a value above 0 when Run starts counts as that many requests. The atomic must
  // outlive Run; any thread may increase it.
  const std::atomic<int>* stop_requests = nullptr;
  // A running task's rank silent this long is named in a kAgent line (again when it resumes).
  // Seconds; a rank's worker beats about every kHeartbeatIntervalSeconds while it trains.
  double silent_rank_warning_seconds = kSilentWarningSeconds;
  // AgentHellos unanswered this long are told in the log, with what to check (again each time as
  // long again passes). Seconds.
  double unanswered_note_seconds = kAgentUnansweredNoteSeconds;
  // When set, the agent publishes its Prometheus page (agent_metrics.h) there about once a
  // second. Must outlive Run.
  MetricsEndpoint* metrics = nullptr;
  // When set, told on Run's thread of each task the agent starts (after its Ack), and of each
  // task's end with the exits it reported: a process that embeds the agent for one job (`cohort
  // launch`) ends with it.
  std::function<void(uint64_t task_id)> on_task_started;
  std::function<void(uint64_t task_id, const std::vector<TaskExit>& exits)> on_task_exited;
  // When set, asked on Run's thread of each StartTask before the agent takes it: an error refuses
  // the task (ErrorReply InvalidRequest with its message), as a `cohort launch` rank refuses a
  // task its launcher's variables or its config contradict.
  std::function<absl::Status(const StartTask& task)> check_task;
  // When set, told on Run's thread once, when a handshake with the orchestrator first succeeded
  // (however soon the connection was lost again): a `cohort launch` rank learns that its rank 0
  // served.
  std::function<void()> on_connected;
  // When set, told on Run's thread each time the orchestrator refuses this agent's registration,
  // with its reason (the agent tries again kAgentHelloRetrySeconds later): a `cohort launch` rank
  // that is no rank of rank 0's launch ends with it.
  std::function<void(absl::string_view why)> on_registration_refused;
  // When set, told on Run's thread each time a registration went unanswered for
  // kAgentUnheardHelloSeconds on a connection that is up (the agent then registers on a fresh
  // connection), with how many did so in a row since the latest answer, and with 0 at the answer
  // after such a run: an orchestrator that answers nothing on a live connection most likely holds
  // another connection under this agent's id (ZeroMQ does not hear a second one).
  std::function<void(uint32_t in_a_row)> on_registration_unheard;
  // How many ended tasks' folders stay in <work_dir>/tasks/ (task_folders.h): older ones are
  // removed when Run starts and whenever a task ends.
  size_t ended_task_folders_kept = kEndedTaskFoldersKept;
};

class Agent final : private TaskRun::Listener {
 public:
  explicit Agent(AgentOptions options);
  ~Agent() override;
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Serves the orchestrator until SIGINT or SIGTERM (or a stop request) and every task has
  // exited. An error only when the connection cannot be set up (a malformed endpoint or agent id).
  absl::Status Run();

 private:
  void OnTick();
  // Removes the folders of ended tasks past options_.ended_task_folders_kept; returns how many.
  size_t PruneTaskFolders();
  void PumpConnection();
  void Handle(const DecodedControl& received);
  void HandleStartTask(uint64_t message_id, const StartTask& start);
  void HandleKillTask(uint64_t message_id, const KillTask& kill);
  void HandleAck(uint64_t correlation_id, const ControlVersion& version);
  void HandleErrorReply(uint64_t correlation_id, const ErrorReply& error);
  // agent_registration.cc: registering, and registering again.
  void SendHello();
  // Sends the AgentHello again when it is due: unregistered, every kAgentHelloRetrySeconds; a
  // hello unanswered for kAgentUnheardHelloSeconds on a connection that is up, on a fresh one.
  void KeepRegistering(double now);
  // Sends, in order, the kept reports and then the exits that could not be sent yet (the queue
  // was full, or a registration sends them again), while registered with no registration
  // waiting for its answer; stops at the first that cannot go.
  void SendWaiting();
  // While unregistered: every options_.unanswered_note_seconds without an answer, says so in the
  // log with what to check.
  void TellOfUnansweredHellos(double now);
  // A message from the orchestrator's address that could not be read, dropped: said in the log,
  // asking before any registration whether the address is the orchestrator's clients' port.
  void TellOfDroppedMessage(absl::string_view why);
  // Says in the log when the connection to the orchestrator is lost, and when it is back; a
  // connection back registers again, which sends the unacknowledged reports again (whatever went
  // with the lost connection) and tells an orchestrator that gave the agent up that it is back.
  void WatchConnection(double now);
  void SendHeartbeat();
  // Sends what the orchestrator's minor knows of `message` (KnownAtMinor), logging a failure;
  // the message id, 0 when not sent (nothing known, or the sending failed).
  uint64_t Send(const ControlMessage& message, uint64_t correlation_id = 0);
  void SendExit(const TaskExit& exit);
  void ForgetAcknowledgedTasks();
  // Whether `task_id` ran here, exited and was forgotten.
  bool Forgotten(uint64_t task_id) const;
  // Acts on the increases of *options_.stop_requests since the last tick.
  void TakeStopRequests();
  // One stop request, from `cause` ("SIGINT", "SIGTERM", "stop requested").
  void Shutdown(absl::string_view cause);
  void Log(absl::string_view line);
  // Publishes the metrics page when one is due (at most once a second).
  void PublishMetrics(double now);
  // Reads the GPU slots' utilization and memory, at most once a second.
  void SampleGpus(double now);

  // TaskRun::Listener
  void OnTaskStatus(const TaskStatus& status) override;
  void OnTaskReport(const ControlMessage& report) override;
  void OnLogLine(uint64_t task_id, const LogLine& line) override;
  void OnTaskExited(uint64_t task_id, const std::vector<TaskExit>& exits) override;

  static void OnPoll(uv_poll_t* poll, int status, int events);
  static void OnTimer(uv_timer_t* timer);
  static void OnHeartbeatTimer(uv_timer_t* timer);
  static void OnSignal(uv_signal_t* handle, int signal);
  // SIGCONT: the agent was stopped and goes on. Its workers stopped themselves meanwhile
  // (SupervisorWatch): they are continued now, and again for kContinueWorkersSeconds, in case one
  // saw the agent stopped just before and stopped just after.
  static void OnContinued(uv_signal_t* handle, int signal);
  void ContinueWorkers(double now);
  // On each tick: continues the workers again every kContinueWorkersEverySeconds while
  // kContinueWorkersSeconds have not passed since the agent's SIGCONT.
  void KeepContinuingWorkers(double now);

  struct UnackedExit {
    uint64_t message_id = 0;  // of its last sending; 0 if it could not be sent
    TaskExit exit;
  };

  AgentOptions options_;
  TaskTable table_;
  TaskRunSetup task_setup_;  // what every TaskRun gets besides its StartTask, from options_
  std::unique_ptr<OrchestratorConnection> connection_;
  std::map<uint64_t, std::unique_ptr<TaskRun>> runs_;
  std::map<uint64_t, LogBatcher> log_batchers_;
  std::vector<UnackedExit> unacked_exits_;
  UnackedReports unacked_reports_;
  bool told_dropped_reports_ = false;        // since the latest registration
  uint64_t failed_sends_ = 0;  // Sends that could not queue since the latest one that could
  std::deque<uint64_t> forgotten_task_ids_;  // the latest kRememberedTaskIds, oldest first
  // The AgentHellos sent since the latest answer to one, newest last (at most kHelloIdsKept): an
  // orchestrator slow to answer may answer an earlier one.
  static constexpr size_t kHelloIdsKept = 16;
  std::vector<uint64_t> hello_ids_;
  bool IsHelloId(uint64_t message_id) const;
  bool hello_pending_ = false;  // an AgentHello was sent (or could not be) and is not answered
  bool registered_ = false;
  bool ever_registered_ = false;  // registered once at least, whatever came after
  // From the Ack of the latest AgentHello; 0 before it and after ErrorReply NotRegistered.
  uint16_t orchestrator_minor_ = 0;
  double last_hello_ = 0;  // monotonic seconds
  // Since when AgentHellos have gone unanswered (monotonic seconds; nullopt while registered),
  // and when the agent last said so in its log.
  std::optional<double> unanswered_since_;
  double unanswered_told_ = 0;
  std::string refusal_told_;             // the orchestrator's refusal of the handshake last logged
  bool told_connected_ = false;          // on_connected was called
  std::optional<double> last_heard_;     // monotonic seconds of the orchestrator's latest message
  bool orchestrator_connected_ = false;  // as WatchConnection last saw it
  bool connection_lost_ = false;         // lost since it was last seen connected
  double connected_since_ = 0;           // monotonic seconds WatchConnection saw it up from
  uint32_t unheard_hellos_ = 0;          // on a live connection, in a row since the latest answer
  double last_metrics_ = -1;             // monotonic seconds of the latest metrics page
  double last_gpu_sample_ = -1;          // monotonic seconds of the latest GPU readings
  // The GPU slots' readings (NVML); null when the agent offers no GPU slot.
  std::unique_ptr<GpuMonitor> gpu_monitor_;
  int shutdown_requests_ = 0;    // signals and stop requests acted on
  int stop_requests_taken_ = 0;  // of *options_.stop_requests
  bool stopping_loop_ = false;

  uv_loop_t loop_;
  uv_poll_t poll_;
  uv_timer_t tick_;
  uv_timer_t heartbeat_;
  uv_signal_t signals_[3];  // SIGINT, SIGTERM, SIGHUP; only without options_.stop_requests (SIGHUP
                            // initialized but not started while HangupIgnored)
  uv_signal_t continued_;   // SIGCONT
  double continue_workers_until_ = 0;
  double workers_continued_at_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_AGENT_H_
