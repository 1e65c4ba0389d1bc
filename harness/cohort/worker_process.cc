#include "harness/cohort/worker_process.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>
#include <variant>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

constexpr uint64_t kTickMilliseconds = 50;

struct Supervision;

// One output pipe of one worker: complete lines go to the log, prefixed when asked.
struct OutputPipe {
  uv_pipe_t pipe;
  Supervision* supervision = nullptr;
  int log_fd = -1;
  std::string prefix;
  std::string partial;  // the current line, until its newline arrives
};

// One worker process.
struct Worker {
  uv_process_t process;
  OutputPipe out[2];  // stdout, stderr
  Supervision* supervision = nullptr;
  bool running = false;
  ChildExit exit;
};

// Everything the libuv callbacks share.
struct Supervision {
  uv_loop_t loop;
  uv_timer_t timer;
  uv_poll_t hub_poll;      // the hub's notification fd: messages are handled as they arrive
  uv_signal_t signals[2];  // SIGINT, SIGTERM
  std::vector<std::unique_ptr<Worker>> workers;

  WorkerHub* hub = nullptr;
  const WorkerMessageHandler* on_message = nullptr;
  const std::function<void()>* on_tick = nullptr;
  std::vector<std::string> peers;  // of the workers that said hello
  size_t finished = 0;             // TrialFinished messages received
  size_t running = 0;
  bool loop_handles = false;  // timer, hub poll and signals initialised
  int interrupts = 0;
};

void Deliver(Supervision& s, std::vector<WorkerHub::Received> received) {
  for (WorkerHub::Received& r : received) {
    if (std::holds_alternative<WorkerHello>(r.message)) s.peers.push_back(r.peer);
    if (std::holds_alternative<TrialFinished>(r.message)) ++s.finished;
    (*s.on_message)(r.peer, r.message);
  }
}

void CloseHandle(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, nullptr);
}

void WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void OnAlloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
  buf->base = new char[suggested];
  buf->len = suggested;
}

void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  OutputPipe& out = *static_cast<OutputPipe*>(stream->data);
  if (nread > 0) {
    out.partial.append(buf->base, static_cast<size_t>(nread));
    size_t start = 0;
    for (size_t newline; (newline = out.partial.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      WriteAll(out.log_fd, absl::StrCat(out.prefix,
                                        absl::string_view(out.partial).substr(start, newline + 1 - start)));
    }
    out.partial.erase(0, start);
  }
  delete[] buf->base;
  if (nread < 0) {  // EOF or error: the rest of the last line, then close
    if (!out.partial.empty()) WriteAll(out.log_fd, absl::StrCat(out.prefix, out.partial, "\n"));
    out.partial.clear();
    CloseHandle(reinterpret_cast<uv_handle_t*>(stream));
  }
}

void KillRunning(Supervision& s, int signal) {
  for (const std::unique_ptr<Worker>& worker : s.workers) {
    if (worker->running) uv_process_kill(&worker->process, signal);
  }
}

void OnExit(uv_process_t* process, int64_t exit_status, int term_signal) {
  Worker& worker = *static_cast<Worker*>(process->data);
  Supervision& s = *worker.supervision;
  worker.running = false;
  worker.exit.signaled = term_signal != 0;
  worker.exit.signal = term_signal;
  worker.exit.code = static_cast<int>(exit_status);
  CloseHandle(reinterpret_cast<uv_handle_t*>(process));
  // A worker that died or failed leaves the others waiting in a collective: end them.
  if (worker.exit.signaled || worker.exit.code != 0) KillRunning(s, SIGKILL);
  if (--s.running == 0 && s.loop_handles) {
    CloseHandle(reinterpret_cast<uv_handle_t*>(&s.timer));
    CloseHandle(reinterpret_cast<uv_handle_t*>(&s.hub_poll));
    for (uv_signal_t& signal : s.signals) CloseHandle(reinterpret_cast<uv_handle_t*>(&signal));
  }
}

void OnTick(uv_timer_t* timer) {
  Supervision& s = *static_cast<Supervision*>(timer->data);
  Deliver(s, s.hub->Drain());
  (*s.on_tick)();
}

// Rendezvous requests are answered as they arrive, not on the next tick (a Gloo full mesh makes
// two requests per peer, one after the other).
void OnHubReadable(uv_poll_t* poll, int /*status*/, int /*events*/) {
  Supervision& s = *static_cast<Supervision*>(poll->data);
  for (std::vector<WorkerHub::Received> received = s.hub->Drain(); !received.empty();
       received = s.hub->Drain()) {
    Deliver(s, std::move(received));
  }
}

void OnSignal(uv_signal_t* handle, int) {
  Supervision& s = *static_cast<Supervision*>(handle->data);
  if (s.running == 0) return;
  ++s.interrupts;
  if (s.interrupts > 1) {
    KillRunning(s, SIGKILL);
    return;
  }
  // Every worker that said hello gets a StopCommand; the others (still starting) a SIGTERM,
  // which a worker treats the same way.
  bool all_told = s.peers.size() == s.workers.size();
  for (const std::string& peer : s.peers) {
    if (!s.hub->Send(peer, StopCommand{"interrupted"}).ok()) all_told = false;
  }
  if (!all_told) KillRunning(s, SIGTERM);
}

absl::Status Spawn(Supervision& s, Worker& worker, const WorkerLaunch& launch, int log_fd,
                   const std::string& prefix) {
  worker.supervision = &s;
  for (OutputPipe& out : worker.out) {
    uv_pipe_init(&s.loop, &out.pipe, 0);
    out.pipe.data = &out;
    out.supervision = &s;
    out.log_fd = log_fd;
    out.prefix = prefix;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(launch.executable.c_str()));
  for (const std::string& arg : launch.args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  for (int i = 1; i <= 2; ++i) {
    stdio[i].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[i].data.stream = reinterpret_cast<uv_stream_t*>(&worker.out[i - 1].pipe);
  }
  uv_process_options_t options;
  std::memset(&options, 0, sizeof(options));
  options.exit_cb = OnExit;
  options.file = launch.executable.c_str();
  options.args = argv.data();
  options.stdio_count = 3;
  options.stdio = stdio;
  worker.process.data = &worker;
  const int spawned = uv_spawn(&s.loop, &worker.process, &options);
  if (spawned != 0) {
    for (OutputPipe& out : worker.out) CloseHandle(reinterpret_cast<uv_handle_t*>(&out.pipe));
    CloseHandle(reinterpret_cast<uv_handle_t*>(&worker.process));
    return absl::InternalError(
        absl::StrCat("cannot start ", launch.executable, ": ", uv_strerror(spawned)));
  }
  worker.running = true;
  ++s.running;
  for (OutputPipe& out : worker.out) {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&out.pipe), OnAlloc, OnRead);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SelfExecutable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return absl::InternalError("cannot find this executable (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

absl::StatusOr<WorkerOutcome> SuperviseWorkers(const std::vector<WorkerLaunch>& launches,
                                               WorkerHub& hub,
                                               const WorkerMessageHandler& on_message,
                                               const std::function<void()>& on_tick) {
  Supervision s;
  s.hub = &hub;
  s.on_message = &on_message;
  s.on_tick = &on_tick;
  std::vector<int> log_fds;
  absl::Status status;
  uv_loop_init(&s.loop);
  for (size_t rank = 0; rank < launches.size() && status.ok(); ++rank) {
    const int fd =
        ::open(launches[rank].log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      status = absl::InternalError(
          absl::StrCat("cannot open ", launches[rank].log_path, ": ", std::strerror(errno)));
      break;
    }
    log_fds.push_back(fd);
    s.workers.push_back(std::make_unique<Worker>());
    const std::string prefix = launches.size() > 1 ? absl::StrCat("[rank ", rank, "] ") : "";
    status = Spawn(s, *s.workers.back(), launches[rank], fd, prefix);
  }
  if (!status.ok()) {
    KillRunning(s, SIGKILL);  // those already started; their exit callbacks close them
  } else {
    s.loop_handles = true;
    uv_timer_init(&s.loop, &s.timer);
    s.timer.data = &s;
    uv_timer_start(&s.timer, OnTick, kTickMilliseconds, kTickMilliseconds);
    uv_poll_init(&s.loop, &s.hub_poll, hub.NotificationFd());
    s.hub_poll.data = &s;
    uv_poll_start(&s.hub_poll, UV_READABLE, OnHubReadable);
    const int signal_numbers[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; ++i) {
      uv_signal_init(&s.loop, &s.signals[i]);
      s.signals[i].data = &s;
      uv_signal_start(&s.signals[i], OnSignal, signal_numbers[i]);
    }
  }
  uv_run(&s.loop, UV_RUN_DEFAULT);
  uv_loop_close(&s.loop);
  for (const int fd : log_fds) ::close(fd);
  if (!status.ok()) return status;

  // Messages the workers queued before exiting may still be on their way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (s.finished < s.workers.size() && std::chrono::steady_clock::now() < deadline) {
    Deliver(s, hub.Wait(std::chrono::milliseconds(kTickMilliseconds)));
  }
  Deliver(s, hub.Drain());
  (*s.on_tick)();
  WorkerOutcome outcome;
  for (const std::unique_ptr<Worker>& worker : s.workers) outcome.exits.push_back(worker->exit);
  outcome.interrupts = s.interrupts;
  return outcome;
}

}  // namespace cohort
