#include "runtime/agent/task_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "runtime/agent/worker_invocation.h"
#include "runtime/base/clock.h"
#include "runtime/base/daemon_log.h"
#include "runtime/base/file_io.h"

namespace cohort {
namespace {

// How long the worker channel is still read, once the processes are gone, for the messages they
// sent last (their TrialFinished).
constexpr double kLastMessagesSeconds = 1.0;

std::string TaskFolder(const std::string& work_dir, uint64_t task_id) {
  return absl::StrCat(work_dir, "/tasks/", task_id);
}

}  // namespace

TaskRun::TaskRun(uv_loop_t* loop, const StartTask& task, Listener& listener)
    : loop_(loop), task_(task), listener_(listener) {
  uv_timer_init(loop_, &grace_timer_);
  grace_timer_.data = this;
  ++open_handles_;
}

TaskRun::~TaskRun() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

std::unique_ptr<TaskRun> TaskRun::Start(uv_loop_t* loop, const StartTask& task,
                                        const TaskRunSetup& setup, Listener& listener) {
  std::unique_ptr<TaskRun> run(new TaskRun(loop, task, listener));
  run->log_ = setup.log;
  run->gpu_readings_ = setup.gpu_readings;
  if (absl::Status prepared = run->Prepare(setup); !prepared.ok()) {
    run->start_error_ = std::string(prepared.message());
  } else {
    run->SpawnAll(setup);
  }
  return run;
}

absl::Status TaskRun::Prepare(const TaskRunSetup& setup) {
  const std::string run_dir = TaskFolder(setup.work_dir, task_.task_id);
  std::error_code error;
  std::filesystem::create_directories(run_dir, error);
  if (error)
    return absl::InternalError(absl::StrCat("cannot create ", run_dir, ": ", error.message()));
  std::string config = task_.worker.config_yaml;
  if (config.empty()) {
    absl::StatusOr<std::string> read = ReadWholeFile(task_.worker.config_path);
    if (!read.ok()) {
      return absl::Status(read.status().code(),
                          absl::StrCat("cannot read the config: ", read.status().message()));
    }
    config = *std::move(read);
  }
  if (absl::Status written = WriteWholeFile(run_dir + "/config.yaml", config); !written.ok()) {
    return written;
  }
  const std::string log_path = run_dir + "/log.txt";
  log_fd_ = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd_ < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", log_path, ": ", std::strerror(errno)));
  }
  absl::StatusOr<std::unique_ptr<WorkerHub>> hub =
      WorkerHub::Bind("tcp://127.0.0.1:*", [this](absl::string_view why) {
        Log(absl::StrCat("task ", task_.task_id, ": dropped a worker message: ", why));
      });
  if (!hub.ok()) return hub.status();
  hub_ = *std::move(hub);
  uv_poll_init(loop_, &hub_poll_, hub_->NotificationFd());
  hub_poll_.data = this;
  uv_poll_start(&hub_poll_, UV_READABLE, OnHubReadable);
  hub_watched_ = true;
  ++open_handles_;
  return absl::OkStatus();
}

void TaskRun::SpawnAll(const TaskRunSetup& setup) {
  const std::string run_dir = TaskFolder(setup.work_dir, task_.task_id);
  TaskPlaces places{setup.executable,
                    run_dir,
                    hub_->endpoint(),
                    task_.worker.checkpoint_root.empty() ? run_dir + "/checkpoints"
                                                         : task_.worker.checkpoint_root,
                    setup.advertise_address,
                    setup.agent_curve};
  for (const RankAssignment& assignment : task_.ranks) {
    auto rank = std::make_unique<Rank>();
    rank->run = this;
    rank->assignment = assignment;
    rank->heartbeats = HeartbeatMonitor(setup.silent_rank_warning_seconds);
    ranks_.push_back(std::move(rank));
  }
  for (std::unique_ptr<Rank>& rank : ranks_) {
    AgentSlot slot{rank->assignment.slot_index, SlotKind::kCpu, -1, "cpu"};
    for (const AgentSlot& s : setup.slots) {
      if (s.index == rank->assignment.slot_index) slot = s;
    }
    const WorkerInvocation invocation =
        WorkerInvocationFor(task_, rank->assignment, slot, places, setup.base_environment);
    if (absl::Status spawned = Spawn(*rank, invocation); !spawned.ok()) {
      rank->outcome.spawn_error = std::string(spawned.message());
      break;
    }
  }
  const bool any_spawned = ranks_.front()->outcome.spawned;
  bool all_spawned = true;
  for (const std::unique_ptr<Rank>& rank : ranks_)
    all_spawned = all_spawned && rank->outcome.spawned;
  if (!any_spawned) {
    start_error_ = ranks_.front()->outcome.spawn_error;  // the ranks stay until their handles close
    return;
  }
  SetState(TaskState::kStarting);
  if (!all_spawned) Kill("a rank could not be started", 0);
}

void TaskRun::Log(absl::string_view line) const {
  if (log_) {
    log_(line);
  } else {
    LogDaemonLine("cohort agent", line);
  }
}

void TaskRun::WriteToLogFile(absl::string_view line) {
  const std::string terminated = absl::StrCat(line, "\n");
  if (log_fd_ >= 0 && ::write(log_fd_, terminated.data(), terminated.size()) < 0) {
    ::close(log_fd_);  // a full disk must not stop the task; the orchestrator gets the lines
    log_fd_ = -1;
  }
}

void TaskRun::AgentLine(const Rank& rank, std::string text) {
  WriteToLogFile(absl::StrCat("[agent] ", text));
  listener_.OnLogLine(task_.task_id, LogLine{rank.assignment.rank, LogStream::kAgent,
                                             SystemClock().UnixSeconds(), std::move(text)});
}

absl::Status TaskRun::Spawn(Rank& rank, const WorkerInvocation& invocation) {
  for (int i = 0; i < 2; ++i) {
    OutputPipe& out = rank.out[i];
    uv_pipe_init(loop_, &out.pipe, 0);
    out.pipe.data = &out;
    out.rank = &rank;
    out.stream = i == 0 ? LogStream::kStdout : LogStream::kStderr;
    out.open = true;
    ++open_handles_;
  }
  std::vector<char*> argv, env;
  for (const std::string& arg : invocation.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& entry : invocation.environment)
    env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  for (int i = 1; i <= 2; ++i) {
    stdio[i].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[i].data.stream = reinterpret_cast<uv_stream_t*>(&rank.out[i - 1].pipe);
  }
  uv_process_options_t options;
  std::memset(&options, 0, sizeof(options));
  options.exit_cb = OnExit;
  options.file = argv[0];
  options.args = argv.data();
  options.env = env.data();
  options.stdio_count = 3;
  options.stdio = stdio;
  options.flags = UV_PROCESS_DETACHED;  // its own session and process group, led by the worker
  rank.process.data = &rank;
  const int spawned = uv_spawn(loop_, &rank.process, &options);
  ++open_handles_;  // the process handle is closed whether the spawn worked or not
  if (spawned != 0) {
    for (OutputPipe& out : rank.out) {
      out.open = false;
      Close(reinterpret_cast<uv_handle_t*>(&out.pipe));
    }
    Close(reinterpret_cast<uv_handle_t*>(&rank.process));
    return absl::InternalError(absl::StrCat("cannot start rank ", rank.assignment.rank, " (",
                                            argv[0], "): ", uv_strerror(spawned)));
  }
  rank.outcome.spawned = rank.running = true;
  rank.pid = rank.process.pid;
  for (OutputPipe& out : rank.out) {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&out.pipe), OnAlloc, OnRead);
  }
  return absl::OkStatus();
}

void TaskRun::Close(uv_handle_t* handle) {
  if (uv_is_closing(handle)) return;
  handle->data = this;
  uv_close(handle, OnClosed);
}

void TaskRun::OnClosed(uv_handle_t* handle) {
  --static_cast<TaskRun*>(handle->data)->open_handles_;
}

void TaskRun::SetState(TaskState state) {
  state_ = state;
  TaskStatus status{task_.task_id, state, {}};
  for (const std::unique_ptr<Rank>& rank : ranks_) {
    if (rank->running) status.processes.push_back(RankProcess{rank->assignment.rank, rank->pid});
  }
  pending_statuses_.push_back(std::move(status));
}

void TaskRun::OnExit(uv_process_t* process, int64_t exit_status, int term_signal) {
  Rank& rank = *static_cast<Rank*>(process->data);
  TaskRun& run = *rank.run;
  rank.running = false;
  rank.outcome.exit_status = exit_status;
  rank.outcome.term_signal = term_signal;
  run.StopWatching(rank);
  run.Close(reinterpret_cast<uv_handle_t*>(process));
  const bool failed = term_signal != 0 || exit_status != 0;
  if (failed && run.state_ != TaskState::kStopping) {
    run.Kill(absl::StrCat("rank ", rank.assignment.rank, " failed"), kPeerFailureGraceSeconds);
  }
  run.ReportExitsIfGone(SystemClock().MonotonicSeconds());
}

void TaskRun::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  TaskRun& run = *static_cast<OutputPipe*>(handle->data)->rank->run;
  buf->base = run.read_buffer_;
  buf->len = sizeof(run.read_buffer_);
}

void TaskRun::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  OutputPipe& out = *static_cast<OutputPipe*>(stream->data);
  Rank& rank = *out.rank;
  TaskRun& run = *rank.run;
  std::vector<std::string> lines;
  if (nread > 0) lines = out.splitter.Add(absl::string_view(buf->base, static_cast<size_t>(nread)));
  if (nread < 0) {  // EOF or an error: the unterminated rest, then close
    if (std::optional<std::string> rest = out.splitter.Finish()) lines.push_back(*std::move(rest));
    out.open = false;
    run.Close(reinterpret_cast<uv_handle_t*>(stream));
  }
  const double now = SystemClock().UnixSeconds();
  for (std::string& text : lines) {
    run.WriteToLogFile(absl::StrCat("[rank ", rank.assignment.rank, "] ", text));
    run.listener_.OnLogLine(run.task_.task_id,
                            LogLine{rank.assignment.rank, out.stream, now, std::move(text)});
  }
  if (!out.open) run.ReportExitsIfGone(SystemClock().MonotonicSeconds());
}

void TaskRun::Handle(const std::string& peer, const WorkerMessage& message) {
  if (const auto* hello = std::get_if<WorkerHello>(&message)) {
    size_t hellos = 0;
    for (std::unique_ptr<Rank>& rank : ranks_) {
      if (rank->assignment.rank == hello->rank && !rank->said_hello) {
        rank->said_hello = true;
        rank->peer = peer;
        if (rank->running) rank->unstamped_beat = hello->batches_trained;
        // A stop asked before this worker could hear it.
        if (state_ == TaskState::kStopping)
          hub_->Send(peer, StopCommand{stop_reason_}).IgnoreError();
      }
      hellos += rank->said_hello ? 1 : 0;
    }
    if (hellos == ranks_.size() && state_ == TaskState::kStarting) SetState(TaskState::kRunning);
  } else if (const auto* metrics = std::get_if<MetricsReport>(&message)) {
    TaskMetricsReport forwarded{task_.task_id, *metrics};
    forwarded.report.trial_id = task_.trial_id;
    forwarded.report.gpus.clear();  // the agent's to say, never a worker's
    if (metrics->kind == ReportKind::kTraining && gpu_readings_) {
      forwarded.report.gpus = gpu_readings_(task_.ranks);
      // Named when the GPUs become unbalanced, not at every report while they stay so.
      const std::optional<std::string> unbalanced = GpuImbalance(forwarded.report.gpus);
      if (unbalanced && !gpus_unbalanced_)
        AgentLine(*ranks_.front(), absl::StrCat("warning: ", *unbalanced));
      gpus_unbalanced_ = unbalanced.has_value();
    }
    exchanged_bytes_ += metrics->exchanged_bytes;
    listener_.OnTaskReport(std::move(forwarded));
    ReportedBatches(peer, metrics->batches);
  } else if (const auto* checkpoint = std::get_if<CheckpointReport>(&message)) {
    listener_.OnTaskReport(TaskCheckpointReport{task_.task_id,
                                                task_.trial_id,
                                                checkpoint->id,
                                                checkpoint->batches,
                                                checkpoint->records,
                                                checkpoint->bytes,
                                                {},
                                                checkpoint->restored});
  } else if (const auto* progress = std::get_if<ProgressReport>(&message)) {
    ProgressReport kept = *progress;
    kept.trial_id = task_.trial_id;
    progress_.Keep(kept);
    // Due as it arrives (on the clock Poll's ticks use), so the first goes out at once, ahead of
    // the reports that follow it: it brings the trial's total, which a trial shorter than one
    // report period would otherwise show its training line without.
    ForwardProgress(progress_.Due(SystemClock().MonotonicSeconds()));
    ReportedBatches(peer, progress->batches);
  } else if (const auto* beat = std::get_if<Heartbeat>(&message)) {
    for (std::unique_ptr<Rank>& rank : ranks_) {
      if (rank->said_hello && rank->peer == peer && rank->running && !rank->outcome.finished) {
        rank->unstamped_beat = beat->batches_trained;
      }
    }
  } else if (const auto* finished = std::get_if<TrialFinished>(&message)) {
    for (std::unique_ptr<Rank>& rank : ranks_) {
      // A rank that failed before its hello (a plugin that would not load) names itself.
      const bool sender = rank->said_hello
                              ? rank->peer == peer
                              : finished->rank == static_cast<int32_t>(rank->assignment.rank) &&
                                    !rank->outcome.finished;
      if (sender) {
        rank->outcome.finished = *finished;
        StopWatching(*rank);
      }
    }
  }
}

void TaskRun::ReportedBatches(const std::string& peer, uint64_t batches) {
  for (std::unique_ptr<Rank>& rank : ranks_) {
    if (rank->said_hello && rank->peer == peer) {
      rank->reported_batches = std::max(rank->reported_batches, batches);
    }
  }
}

void TaskRun::StopWatching(Rank& rank) {
  rank.heartbeats.Forget(rank.assignment.rank);
  rank.unstamped_beat.reset();
}

void TaskRun::WatchHeartbeats(double now) {
  for (std::unique_ptr<Rank>& rank : ranks_) {
    if (rank->unstamped_beat) {
      std::optional<std::string> back =
          rank->heartbeats.Beat(rank->assignment.rank, *rank->unstamped_beat, now);
      rank->unstamped_beat.reset();
      if (back) AgentLine(*rank, *std::move(back));
    }
    rank->heartbeats.Reported(rank->assignment.rank, rank->reported_batches);
    for (const std::string& silent : rank->heartbeats.Check(now)) {
      AgentLine(*rank, absl::StrCat("warning: ", silent));
    }
  }
}

void TaskRun::ForwardProgress(std::optional<ProgressReport> progress) {
  if (!progress) return;
  records_trained_ = progress->records;
  listener_.OnTaskReport(TaskProgress{task_.task_id, *std::move(progress)});
}

bool TaskRun::ProcessesGone() const {
  for (const std::unique_ptr<Rank>& rank : ranks_) {
    if (rank->running || rank->out[0].open || rank->out[1].open) return false;
  }
  return true;
}

bool TaskRun::LastMessagesIn() const {
  for (const std::unique_ptr<Rank>& rank : ranks_) {
    // Any rank that ended by itself may have said how its trial ended (before its hello, too:
    // TrialFinished names its rank), even when its exit, code 0 included, is seen first.
    const bool may_have_said = rank->said_hello || rank->outcome.spawned;
    if (may_have_said && rank->outcome.term_signal == 0 && !rank->outcome.finished) return false;
  }
  return true;
}

void TaskRun::OnHubReadable(uv_poll_t* poll, int, int) {
  static_cast<TaskRun*>(poll->data)->ServeWorkerChannel();
}

void TaskRun::ServeWorkerChannel() {
  if (hub_ != nullptr) {
    // The notification fd is edge-triggered: read until nothing is left.
    for (std::vector<WorkerHub::Received> received = hub_->Drain(); !received.empty();
         received = hub_->Drain()) {
      for (const WorkerHub::Received& message : received) {
        if (!rendezvous_.Handle(*hub_, message.peer, message.message)) {
          Handle(message.peer, message.message);
        }
      }
    }
  }
  TellPendingStatuses();
}

void TaskRun::TellPendingStatuses() {
  std::vector<TaskStatus> statuses;
  statuses.swap(pending_statuses_);
  for (const TaskStatus& status : statuses) listener_.OnTaskStatus(status);
}

void TaskRun::Poll(double now) {
  ServeWorkerChannel();
  if (exits_reported_) return;
  ForwardProgress(progress_.Due(now));
  WatchHeartbeats(now);
  ReportExitsIfGone(now);
}

void TaskRun::ReportExitsIfGone(double now) {
  if (exits_reported_ || !ProcessesGone()) return;
  if (gone_since_ < 0) gone_since_ = now;
  if (!start_error_.empty() || LastMessagesIn() || now - gone_since_ >= kLastMessagesSeconds) {
    ReportExits();
  }
}

void TaskRun::ReportExits() {
  exits_reported_ = true;
  uv_timer_stop(&grace_timer_);
  Close(reinterpret_cast<uv_handle_t*>(&grace_timer_));
  std::vector<TaskExit> exits;
  if (!start_error_.empty()) {
    TaskExit whole;
    whole.task_id = task_.task_id;
    whole.rank = kWholeTask;
    whole.exit_code = 1;
    whole.reason = start_error_;
    exits.push_back(std::move(whole));
  } else {
    for (const std::unique_ptr<Rank>& rank : ranks_) {
      exits.push_back(
          ExitOfRank(task_.task_id, rank->assignment.rank, rank->outcome, stop_reason_));
    }
  }
  ForwardProgress(progress_.Take());  // the last progress, held back, before the exits
  // Statuses still held (kStopping from a kill) go before the exits: told after them, they would
  // undo kExited and leave the task's slots held for good.
  TellPendingStatuses();
  state_ = TaskState::kExited;
  if (hub_watched_) {  // before the hub closes the descriptor the poll watches
    hub_watched_ = false;
    Close(reinterpret_cast<uv_handle_t*>(&hub_poll_));
  }
  hub_.reset();
  listener_.OnTaskExited(task_.task_id, exits);
}

std::optional<double> TaskRun::LongestSilence(double now) const {
  std::optional<double> longest;
  for (const std::unique_ptr<Rank>& rank : ranks_) {
    if (std::optional<double> silence = rank->heartbeats.LongestSilence(now)) {
      longest = std::max(longest.value_or(0.0), *silence);
    }
  }
  return longest;
}

}  // namespace cohort
