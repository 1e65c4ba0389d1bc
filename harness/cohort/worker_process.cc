#include "harness/cohort/worker_process.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <variant>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

constexpr uint64_t kTickMilliseconds = 50;

// Everything the libuv callbacks share; each handle's `data` points here.
struct Supervision {
  uv_loop_t loop;
  uv_process_t process;
  uv_pipe_t pipes[2];  // the worker's stdout and stderr
  uv_timer_t timer;
  uv_signal_t signals[2];  // SIGINT, SIGTERM

  WorkerHub* hub = nullptr;
  const std::function<void(const WorkerMessage&)>* on_message = nullptr;
  const std::function<void()>* on_tick = nullptr;
  int log_fd = -1;
  std::optional<std::string> peer;  // the worker's routing id, once it said hello
  bool finished_seen = false;
  bool exited = false;
  ChildExit exit;
  int interrupts = 0;
};

Supervision& Of(uv_handle_t* handle) { return *static_cast<Supervision*>(handle->data); }

void Deliver(Supervision& s, std::vector<WorkerHub::Received> received) {
  for (WorkerHub::Received& r : received) {
    if (std::holds_alternative<WorkerHello>(r.message)) s.peer = r.peer;
    if (std::holds_alternative<TrialFinished>(r.message)) s.finished_seen = true;
    (*s.on_message)(r.message);
  }
}

void CloseHandle(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, nullptr);
}

void OnAlloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
  buf->base = new char[suggested];
  buf->len = suggested;
}

void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  Supervision& s = Of(reinterpret_cast<uv_handle_t*>(stream));
  if (nread > 0 && s.log_fd >= 0) {
    const char* data = buf->base;
    size_t left = static_cast<size_t>(nread);
    while (left > 0) {
      const ssize_t n = ::write(s.log_fd, data, left);
      if (n <= 0) break;
      data += n;
      left -= static_cast<size_t>(n);
    }
  }
  delete[] buf->base;
  if (nread < 0) CloseHandle(reinterpret_cast<uv_handle_t*>(stream));  // EOF or error
}

void OnExit(uv_process_t* process, int64_t exit_status, int term_signal) {
  Supervision& s = Of(reinterpret_cast<uv_handle_t*>(process));
  s.exited = true;
  s.exit.signaled = term_signal != 0;
  s.exit.signal = term_signal;
  s.exit.code = static_cast<int>(exit_status);
  CloseHandle(reinterpret_cast<uv_handle_t*>(process));
  CloseHandle(reinterpret_cast<uv_handle_t*>(&s.timer));
  for (uv_signal_t& signal : s.signals) CloseHandle(reinterpret_cast<uv_handle_t*>(&signal));
}

void OnTick(uv_timer_t* timer) {
  Supervision& s = Of(reinterpret_cast<uv_handle_t*>(timer));
  Deliver(s, s.hub->Drain());
  (*s.on_tick)();
}

void OnSignal(uv_signal_t* handle, int) {
  Supervision& s = Of(reinterpret_cast<uv_handle_t*>(handle));
  if (s.exited) return;
  ++s.interrupts;
  if (s.interrupts == 1 && s.peer) {
    if (s.hub->Send(*s.peer, StopCommand{"interrupted"}).ok()) return;
  }
  uv_process_kill(&s.process, s.interrupts == 1 ? SIGTERM : SIGKILL);
}

}  // namespace

absl::StatusOr<std::string> SelfExecutable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return absl::InternalError("cannot find this executable (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

absl::StatusOr<WorkerOutcome> SuperviseWorker(
    const WorkerLaunch& launch, WorkerHub& hub,
    const std::function<void(const WorkerMessage&)>& on_message,
    const std::function<void()>& on_tick) {
  Supervision s;
  s.hub = &hub;
  s.on_message = &on_message;
  s.on_tick = &on_tick;
  s.log_fd = ::open(launch.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.log_fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot open ", launch.log_path, ": ", std::strerror(errno)));
  }
  uv_loop_init(&s.loop);
  for (uv_pipe_t& pipe : s.pipes) {
    uv_pipe_init(&s.loop, &pipe, 0);
    pipe.data = &s;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(launch.executable.c_str()));
  for (const std::string& arg : launch.args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  for (int i = 1; i <= 2; ++i) {
    stdio[i].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[i].data.stream = reinterpret_cast<uv_stream_t*>(&s.pipes[i - 1]);
  }
  uv_process_options_t options;
  std::memset(&options, 0, sizeof(options));
  options.exit_cb = OnExit;
  options.file = launch.executable.c_str();
  options.args = argv.data();
  options.stdio_count = 3;
  options.stdio = stdio;
  s.process.data = &s;
  const int spawned = uv_spawn(&s.loop, &s.process, &options);
  if (spawned != 0) {
    for (uv_pipe_t& pipe : s.pipes) CloseHandle(reinterpret_cast<uv_handle_t*>(&pipe));
    CloseHandle(reinterpret_cast<uv_handle_t*>(&s.process));
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
    ::close(s.log_fd);
    return absl::InternalError(
        absl::StrCat("cannot start ", launch.executable, ": ", uv_strerror(spawned)));
  }
  for (uv_pipe_t& pipe : s.pipes) {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&pipe), OnAlloc, OnRead);
  }
  uv_timer_init(&s.loop, &s.timer);
  s.timer.data = &s;
  uv_timer_start(&s.timer, OnTick, kTickMilliseconds, kTickMilliseconds);
  const int signal_numbers[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; ++i) {
    uv_signal_init(&s.loop, &s.signals[i]);
    s.signals[i].data = &s;
    uv_signal_start(&s.signals[i], OnSignal, signal_numbers[i]);
  }
  uv_run(&s.loop, UV_RUN_DEFAULT);
  uv_loop_close(&s.loop);
  ::close(s.log_fd);

  // Reports the worker queued before exiting may still be on their way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!s.finished_seen && std::chrono::steady_clock::now() < deadline) {
    Deliver(s, hub.Wait(std::chrono::milliseconds(kTickMilliseconds)));
  }
  Deliver(s, hub.Drain());
  (*s.on_tick)();
  return WorkerOutcome{s.exit, s.interrupts};
}

}  // namespace cohort
