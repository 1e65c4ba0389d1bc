#include "runtime/agent/agent.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iterator>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "runtime/agent/agent_metrics.h"
#include "runtime/agent/gpu_monitor.h"
#include "runtime/agent/orchestrator_minor.h"
#include "runtime/agent/rendezvous_endpoint.h"
#include "runtime/base/clock.h"
#include "runtime/base/daemon_log.h"
#include "runtime/base/hangup_ignored.h"
#include "runtime/gpu/nvml_gpu_query.h"

namespace cohort {
namespace {

constexpr uint64_t kTickMilliseconds = 20;

void CloseHandle(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, nullptr);
}

}  // namespace

Agent::Agent(AgentOptions options) : options_(std::move(options)), table_(options_.slots) {
  task_setup_.executable = options_.executable;
  task_setup_.work_dir = options_.work_dir;
  task_setup_.slots = options_.slots;
  task_setup_.base_environment = options_.base_environment;
  task_setup_.advertise_address = options_.advertise_address;
  task_setup_.agent_curve = options_.curve;
  task_setup_.silent_rank_warning_seconds = options_.silent_rank_warning_seconds;
  task_setup_.log = [this](absl::string_view line) { Log(line); };
  const bool has_gpus = std::any_of(options_.slots.begin(), options_.slots.end(),
                                    [](const AgentSlot& s) { return s.kind == SlotKind::kGpu; });
  if (has_gpus) {
    gpu_monitor_ = std::make_unique<GpuMonitor>(OpenNvml());
    if (!gpu_monitor_->unavailable().ok()) {
      Log(absl::StrCat("GPU monitoring is off: ", gpu_monitor_->unavailable().message()));
    }
    task_setup_.gpu_readings = [this](const std::vector<RankAssignment>& ranks) {
      return gpu_monitor_->Take(ranks, options_.slots);
    };
  }
}

Agent::~Agent() = default;

void Agent::Log(absl::string_view line) {
  if (options_.log) {
    options_.log(line);
  } else {
    LogDaemonLine("cohort agent", line);
  }
}

absl::Status Agent::Run() {
  absl::StatusOr<std::unique_ptr<OrchestratorConnection>> connection =
      OrchestratorConnection::Connect(
          options_.orchestrator, options_.agent_id,
          [this](absl::string_view why) { TellOfDroppedMessage(why); }, options_.curve);
  if (!connection.ok()) return connection.status();
  connection_ = *std::move(connection);

  uv_loop_init(&loop_);
  uv_poll_init(&loop_, &poll_, connection_->fd());
  poll_.data = this;
  uv_poll_start(&poll_, UV_READABLE, OnPoll);
  uv_timer_init(&loop_, &tick_);
  tick_.data = this;
  uv_timer_start(&tick_, OnTimer, kTickMilliseconds, kTickMilliseconds);
  uv_timer_init(&loop_, &heartbeat_);
  heartbeat_.data = this;
  const auto heartbeat_ms = static_cast<uint64_t>(kAgentHeartbeatSeconds * 1000);
  uv_timer_start(&heartbeat_, OnHeartbeatTimer, heartbeat_ms, heartbeat_ms);
  const bool hangup_ignored = options_.stop_requests == nullptr && HangupIgnored();
  if (options_.stop_requests == nullptr) {
    const int signal_numbers[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; ++i) {
      uv_signal_init(&loop_, &signals_[i]);
      signals_[i].data = this;
      if (signal_numbers[i] == SIGHUP && hangup_ignored) continue;
      uv_signal_start(&signals_[i], OnSignal, signal_numbers[i]);
    }
  }
  uv_signal_init(&loop_, &continued_);
  continued_.data = this;
  uv_signal_start(&continued_, OnContinued, SIGCONT);

  Log(absl::StrCat("agent '", options_.agent_id, "' with ", options_.slots.size(),
                   options_.slots.size() == 1 ? " slot" : " slots",
                   ", connecting to the orchestrator at ", options_.orchestrator,
                   options_.curve ? " over CURVE" : ""));
  if (hangup_ignored) Log("SIGHUP is ignored, as it was when the agent started (nohup)");
  if (const size_t removed = PruneTaskFolders(); removed > 0) {
    Log(absl::StrCat("removed the folders of ", removed, " ended task(s) from ", options_.work_dir,
                     "/tasks (it keeps the newest ", options_.ended_task_folders_kept, ")"));
  }
  SendHello();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  Log("stopped");
  connection_.reset();  // waits briefly for the last messages to leave
  return absl::OkStatus();
}

size_t Agent::PruneTaskFolders() {
  std::set<uint64_t> running;
  for (const auto& [task_id, run] : runs_) running.insert(task_id);
  PrunedTaskFolders pruned =
      PruneEndedTaskFolders(options_.work_dir, running, options_.ended_task_folders_kept);
  for (const std::string& problem : pruned.problems) Log(problem);
  return pruned.removed.size();
}

void Agent::OnPoll(uv_poll_t* poll, int, int) { static_cast<Agent*>(poll->data)->PumpConnection(); }

void Agent::OnTimer(uv_timer_t* timer) { static_cast<Agent*>(timer->data)->OnTick(); }

void Agent::OnHeartbeatTimer(uv_timer_t* timer) {
  static_cast<Agent*>(timer->data)->SendHeartbeat();
}

void Agent::OnSignal(uv_signal_t* handle, int signal) {
  static_cast<Agent*>(handle->data)
      ->Shutdown(signal == SIGINT    ? "SIGINT"
                 : signal == SIGTERM ? "SIGTERM"
                                     : "SIGHUP");
}

void Agent::PumpConnection() {
  // ZMQ_FD is edge-triggered and sending while handling can swallow its signal: read until empty,
  // or for a bounded number of rounds, so that a peer answering every reply at once (a task
  // refused and placed again, back and forth) cannot keep the loop from reaping workers and
  // ticking; the next tick reads on.
  constexpr int kMaxRounds = 8;
  int rounds = 0;
  for (std::vector<DecodedControl> received = connection_->Drain(); !received.empty();
       received = ++rounds < kMaxRounds ? connection_->Drain() : std::vector<DecodedControl>{}) {
    for (const DecodedControl& message : received) Handle(message);
  }
}

void Agent::OnTick() {
  if (stopping_loop_) return;
  TakeStopRequests();
  PumpConnection();
  const double now = SystemClock().MonotonicSeconds();
  bool any_closed = false;
  for (auto it = runs_.begin(); it != runs_.end();) {
    it->second->Poll(now);
    const bool closed = it->second->closed();
    any_closed = any_closed || closed;
    it = closed ? runs_.erase(it) : std::next(it);
  }
  if (any_closed) PruneTaskFolders();
  KeepContinuingWorkers(now);
  for (auto& [task_id, batcher] : log_batchers_) {
    if (std::optional<LogBatch> due = batcher.Due(now)) Send(*due);
  }
  KeepRegistering(now);
  SendWaiting();
  TellOfUnansweredHellos(now);
  WatchConnection(now);
  PumpConnection();
  SampleGpus(now);
  PublishMetrics(now);
  if (shutdown_requests_ > 0 && runs_.empty()) {
    SendHeartbeat();  // departing, with no task left: the orchestrator takes the agent as gone
    stopping_loop_ = true;
    CloseHandle(reinterpret_cast<uv_handle_t*>(&poll_));
    CloseHandle(reinterpret_cast<uv_handle_t*>(&tick_));
    CloseHandle(reinterpret_cast<uv_handle_t*>(&heartbeat_));
    if (options_.stop_requests == nullptr) {
      for (uv_signal_t& signal : signals_) CloseHandle(reinterpret_cast<uv_handle_t*>(&signal));
    }
    CloseHandle(reinterpret_cast<uv_handle_t*>(&continued_));
  }
}

void Agent::TakeStopRequests() {
  if (options_.stop_requests == nullptr) return;
  const int requested = options_.stop_requests->load(std::memory_order_relaxed);
  for (; stop_requests_taken_ < requested; ++stop_requests_taken_) Shutdown("stop requested");
}

void Agent::Shutdown(absl::string_view cause) {
  ++shutdown_requests_;
  const uint32_t grace = shutdown_requests_ == 1 ? kShutdownGraceSeconds : 0;
  Log(absl::StrCat(cause, ": stopping ", runs_.size(), " task(s)",
                   grace == 0 ? " at once" : absl::StrCat(", ", grace, " s grace")));
  // Told at once, so that no task is placed here meanwhile.
  if (shutdown_requests_ == 1 && !runs_.empty()) SendHeartbeat();
  for (auto& [task_id, run] : runs_) run->Kill("the agent is shutting down", grace);
}

uint64_t Agent::Send(const ControlMessage& message, uint64_t correlation_id) {
  std::optional<ControlMessage> known = KnownAtMinor(message, orchestrator_minor_);
  if (!known) return 0;
  absl::StatusOr<uint64_t> id = connection_->Send(*known, correlation_id);
  // A long outage fills the queue: its first failure is told, the rest counted until one leaves.
  if (!id.ok()) {
    if (failed_sends_++ == 0) {
      Log(absl::StrCat("cannot send ", DescribeControlMessage(message), ": ", id.status().message(),
                       " (what cannot be sent until the queue drains is counted, not logged; the "
                       "task reports among it are kept and sent again)"));
    }
    return 0;
  }
  if (failed_sends_ > 0) {
    Log(absl::StrCat("the queue to the orchestrator has room again (", failed_sends_,
                     " sends failed while it was full)"));
  }
  failed_sends_ = 0;
  return *id;
}

void Agent::SendHeartbeat() {
  if (!registered_ || stopping_loop_) return;
  AgentHeartbeat beat{options_.agent_id, SystemClock().UnixSeconds(), table_.BusySlots(),
                      table_.LiveTaskIds()};
  beat.departing = shutdown_requests_ > 0;
  if (gpu_monitor_ != nullptr) {
    // A task whose rank 0 runs elsewhere has its reports forwarded by that agent; the orchestrator
    // adds these GPUs to them.
    for (const auto& [task_id, run] : runs_) {
      const std::vector<RankAssignment>& ranks = run->ranks();
      const bool reports_here = std::any_of(ranks.begin(), ranks.end(),
                                            [](const RankAssignment& r) { return r.rank == 0; });
      if (reports_here) continue;
      std::vector<GpuReading> gpus = gpu_monitor_->Take(ranks, options_.slots);
      if (!gpus.empty()) beat.task_gpus.push_back({task_id, std::move(gpus)});
    }
  }
  Send(beat);
}

void Agent::SendExit(const TaskExit& exit) {
  // Behind whatever waits to be sent: a task's exit comes after its reports.
  const bool waits =
      unacked_reports_.HasUnsent() ||
      std::any_of(unacked_exits_.begin(), unacked_exits_.end(),
                  [](const UnackedExit& pending) { return pending.message_id == 0; });
  unacked_exits_.push_back(UnackedExit{waits ? 0 : Send(exit), exit});
  if (waits) SendWaiting();
}

void Agent::Handle(const DecodedControl& received) {
  last_heard_ = SystemClock().MonotonicSeconds();
  const uint64_t id = received.header.message_id;
  const uint64_t correlation = received.header.correlation_id;
  std::visit(
      [&](const auto& message) {
        using T = std::decay_t<decltype(message)>;
        if constexpr (std::is_same_v<T, StartTask>) {
          HandleStartTask(id, message);
        } else if constexpr (std::is_same_v<T, KillTask>) {
          HandleKillTask(id, message);
        } else if constexpr (std::is_same_v<T, TaskListRequest>) {
          Send(TaskList{table_.Entries()}, id);
        } else if constexpr (std::is_same_v<T, Ack>) {
          HandleAck(correlation, received.version);
        } else if constexpr (std::is_same_v<T, ErrorReply>) {
          HandleErrorReply(correlation, message);
        } else {
          Log(absl::StrCat("ignored ", ControlMessageName(received.message),
                           ": an agent does not take it"));
        }
      },
      received.message);
}

void Agent::HandleStartTask(uint64_t message_id, const StartTask& start) {
  if (shutdown_requests_ > 0) {
    // No slot of a departing agent takes a task: the orchestrator places it elsewhere.
    Send(ErrorReply{ControlErrorCode::kSlotUnavailable, "the agent is shutting down"}, message_id);
    return;
  }
  // A task the embedding process refuses is refused before any slot is reserved for it.
  absl::Status admitted = options_.check_task ? options_.check_task(start) : absl::OkStatus();
  if (!admitted.ok()) {
    admitted = absl::InvalidArgumentError(admitted.message());
  } else if (Forgotten(start.task_id) || runs_.count(start.task_id) != 0) {
    admitted = absl::AlreadyExistsError(
        absl::StrCat("task ", start.task_id, " has already run on this agent"));
  } else {
    admitted = table_.Admit(start);
  }
  if (!admitted.ok()) {
    Log(absl::StrCat("refused ", DescribeControlMessage(start), ": ", admitted.message()));
    Send(ErrorReplyFor(admitted), message_id);
    return;
  }
  Send(Ack{}, message_id);
  Log(absl::StrCat("starting ", DescribeControlMessage(start)));
  log_batchers_.emplace(start.task_id, LogBatcher(start.task_id));
  StartTask task = start;
  task.rendezvous.endpoint =
      ReachableRendezvousEndpoint(start.rendezvous.endpoint, options_.orchestrator);
  runs_[start.task_id] = TaskRun::Start(&loop_, task, task_setup_, *this);
  if (options_.on_task_started) options_.on_task_started(start.task_id);
}

void Agent::HandleKillTask(uint64_t message_id, const KillTask& kill) {
  if (table_.Find(kill.task_id) == nullptr && !Forgotten(kill.task_id)) {
    Send(ErrorReplyFor(
             absl::NotFoundError(absl::StrCat("task ", kill.task_id, " is not on this agent"))),
         message_id);
    return;
  }
  Send(Ack{}, message_id);
  Log(absl::StrCat("killing task ", kill.task_id, " (", kill.reason, "), grace ",
                   kill.grace_seconds, " s"));
  if (auto run = runs_.find(kill.task_id); run != runs_.end()) {
    run->second->Kill(kill.reason, kill.grace_seconds);
  }
}

bool Agent::Forgotten(uint64_t task_id) const {
  return std::find(forgotten_task_ids_.begin(), forgotten_task_ids_.end(), task_id) !=
         forgotten_task_ids_.end();
}

void Agent::HandleAck(uint64_t correlation_id, const ControlVersion& version) {
  if (correlation_id == 0) return;
  if (IsHelloId(correlation_id)) {
    // The newest hello's id: the reports sent before it (on connections since dropped, when the
    // Ack answers an older one) go again.
    const uint64_t newest_hello = hello_ids_.back();
    hello_ids_.clear();
    hello_pending_ = false;
    if (std::exchange(unheard_hellos_, 0) > 0 && options_.on_registration_unheard) {
      options_.on_registration_unheard(0);
    }
    orchestrator_minor_ = version.minor;
    if (!registered_) {
      Log(absl::StrCat("registered with the orchestrator at ", options_.orchestrator));
    }
    registered_ = ever_registered_ = true;
    told_dropped_reports_ = false;
    // Reports and exits whose Ack may have been lost with an earlier registration go again, the
    // reports first: they came before their task's exit.
    if (orchestrator_minor_ < kControlMinorWithAcknowledgedReports) {
      unacked_reports_.Clear();  // it acknowledges none
    } else {
      unacked_reports_.MarkUnsentBefore(newest_hello);
    }
    for (UnackedExit& pending : unacked_exits_) pending.message_id = 0;
    SendWaiting();
    return;
  }
  if (unacked_reports_.Acknowledged(correlation_id)) return;
  std::erase_if(unacked_exits_,
                [&](const UnackedExit& pending) { return pending.message_id == correlation_id; });
  ForgetAcknowledgedTasks();
}

void Agent::ForgetAcknowledgedTasks() {
  for (const TaskEntry& task : table_.Entries()) {
    if (task.state != TaskState::kExited) continue;
    bool unacked = false;
    for (const UnackedExit& pending : unacked_exits_) {
      unacked = unacked || pending.exit.task_id == task.task_id;
    }
    if (unacked) continue;
    table_.Remove(task.task_id);
    forgotten_task_ids_.push_back(task.task_id);
    if (forgotten_task_ids_.size() > kRememberedTaskIds) forgotten_task_ids_.pop_front();
  }
}

void Agent::OnTaskStatus(const TaskStatus& status) {
  // An exited task's state is final: its slots are free.
  if (const TaskEntry* held = table_.Find(status.task_id);
      held != nullptr && held->state == TaskState::kExited) {
    return;
  }
  table_.SetState(status.task_id, status.state).IgnoreError();
  Send(status);
}

void Agent::OnTaskReport(const ControlMessage& report) {
  // A metrics report becomes a line of the trial's log: the task's output lines held so far go
  // first, so the log keeps the order they were printed in.
  if (const auto* metrics = std::get_if<TaskMetricsReport>(&report)) {
    if (auto batcher = log_batchers_.find(metrics->task_id); batcher != log_batchers_.end()) {
      if (std::optional<LogBatch> held = batcher->second.Take()) Send(*held);
    }
  }
  if (std::holds_alternative<TaskProgress>(report)) {
    Send(report);  // not kept: the next one says more
    return;
  }
  // Kept for an orchestrator that acknowledges reports, and while the agent does not know yet;
  // behind the kept reports that could not be sent yet, to keep their order.
  if (registered_ && orchestrator_minor_ < kControlMinorWithAcknowledgedReports) {
    Send(report);
  } else if (unacked_reports_.HasUnsent()) {
    unacked_reports_.Keep(0, report);
    SendWaiting();
  } else {
    unacked_reports_.Keep(Send(report), report);
  }
  if (const uint64_t dropped = unacked_reports_.TakeDropped();
      dropped > 0 && !std::exchange(told_dropped_reports_, true)) {
    Log(absl::StrCat("the orchestrator has not acknowledged the latest ", unacked_reports_.size(),
                     " task reports: dropping the oldest, which its record will lack"));
  }
}

void Agent::SampleGpus(double now) {
  if (gpu_monitor_ == nullptr || (last_gpu_sample_ >= 0 && now - last_gpu_sample_ < 1.0)) return;
  last_gpu_sample_ = now;
  gpu_monitor_->Sample(options_.slots);
}

void Agent::PublishMetrics(double now) {
  if (options_.metrics == nullptr || (last_metrics_ >= 0 && now - last_metrics_ < 1.0)) return;
  last_metrics_ = now;
  AgentMetricsSnapshot snapshot;
  snapshot.agent_id = options_.agent_id;
  snapshot.slots = static_cast<uint32_t>(table_.slots().size());
  snapshot.busy_slots = table_.BusySlots();
  snapshot.registered = registered_;
  snapshot.orchestrator_connected = orchestrator_connected_;
  if (last_heard_) snapshot.orchestrator_silence_seconds = now - *last_heard_;
  for (const auto& [task_id, run] : runs_) {
    AgentMetricsSnapshot::Task task;
    task.task_id = task_id;
    task.trial_id = run->trial_id();
    task.records = run->records_trained();
    task.heartbeat_age_seconds = run->LongestSilence(now);
    task.exchanged_bytes = run->exchanged_bytes();
    snapshot.tasks.push_back(task);
  }
  if (gpu_monitor_ != nullptr) {
    for (const AgentSlot& slot : options_.slots) {
      if (slot.kind != SlotKind::kGpu || slot.device_id < 0) continue;
      auto usage = gpu_monitor_->latest().find(static_cast<uint32_t>(slot.device_id));
      if (usage == gpu_monitor_->latest().end()) continue;
      snapshot.gpus.push_back({static_cast<uint32_t>(slot.device_id), slot.name,
                               usage->second.utilization_percent, usage->second.memory_used,
                               usage->second.memory_total});
    }
  }
  options_.metrics->Publish(AgentMetricsPage(snapshot));
}

void Agent::OnLogLine(uint64_t task_id, const LogLine& line) {
  if (line.stream == LogStream::kAgent) Log(absl::StrCat("task ", task_id, ": ", line.text));
  auto batcher = log_batchers_.find(task_id);
  if (batcher == log_batchers_.end()) return;
  if (std::optional<LogBatch> full = batcher->second.Add(line, SystemClock().MonotonicSeconds()))
    Send(*full);
}

void Agent::OnTaskExited(uint64_t task_id, const std::vector<TaskExit>& exits) {
  if (auto batcher = log_batchers_.find(task_id); batcher != log_batchers_.end()) {
    if (std::optional<LogBatch> rest = batcher->second.Take()) Send(*rest);
    log_batchers_.erase(batcher);
  }
  for (const TaskExit& exit : exits) {
    const std::string rank = exit.rank == kWholeTask ? "" : absl::StrCat(" rank ", exit.rank);
    Log(absl::StrCat("task ", task_id, rank, ": ", exit.reason));
    SendExit(exit);
  }
  table_.SetState(task_id, TaskState::kExited).IgnoreError();
  Send(TaskStatus{task_id, TaskState::kExited, {}});
  if (options_.on_task_exited) options_.on_task_exited(task_id, exits);
}

}  // namespace cohort
