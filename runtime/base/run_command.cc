#include "runtime/base/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace cohort {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Both ends of a pipe, closed when it goes.
struct Pipe {
  std::array<int, 2> fds{-1, -1};
  ~Pipe() {
    for (int& fd : fds) CloseEnd(fd);
  }
  static void CloseEnd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// SIGPIPE blocked on this thread while it lives (a child that exits without reading its stdin
// must not end the caller); one that arrived meanwhile is consumed before it is unblocked.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &previous_);
  }
  ~SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  sigset_t previous_;
};

absl::Status Errno(absl::string_view what, absl::string_view program) {
  return absl::InternalError(absl::StrCat(program, ": ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                         const std::string& input, double timeout_seconds) {
  if (argv.empty()) return absl::InvalidArgumentError("RunCommand needs a program");
  const std::string& program = argv[0];
  Pipe in, out, err;
  for (Pipe* pipe : {&in, &out, &err}) {
    if (::pipe2(pipe->fds.data(), O_CLOEXEC) != 0) return Errno("pipe", program);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fds[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const SigpipeBlocked sigpipe_blocked;
  pid_t pid = -1;
  const int spawned =
      posix_spawnp(&pid, program.c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return absl::NotFoundError(absl::StrCat("cannot run ", program, ": ", std::strerror(spawned)));
  }
  Pipe::CloseEnd(in.fds[0]);
  Pipe::CloseEnd(out.fds[1]);
  Pipe::CloseEnd(err.fds[1]);
  if (input.empty()) Pipe::CloseEnd(in.fds[1]);
  if (in.fds[1] >= 0) ::fcntl(in.fds[1], F_SETFL, O_NONBLOCK);

  CommandOutput result;
  size_t written = 0;
  const auto deadline =
      SteadyClock::now() + std::chrono::microseconds(static_cast<int64_t>(timeout_seconds * 1e6));
  bool timed_out = false;
  while (out.fds[0] >= 0 || err.fds[0] >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    std::array<pollfd, 3> items{pollfd{out.fds[0], POLLIN, 0}, pollfd{err.fds[0], POLLIN, 0},
                                pollfd{in.fds[1], POLLOUT, 0}};
    if (::poll(items.data(), items.size(), static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (items[2].revents != 0) {
      const ssize_t n = ::write(in.fds[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // it stopped reading
      if (written == input.size()) Pipe::CloseEnd(in.fds[1]);
    }
    for (auto [index, text] : {std::pair{0, &result.stdout_text}, {1, &result.stderr_text}}) {
      if (items[index].revents == 0) continue;
      int& fd = index == 0 ? out.fds[0] : err.fds[0];
      char buffer[4096];
      const ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n > 0) {
        text->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        Pipe::CloseEnd(fd);
      }
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(program, " did not finish within ", timeout_seconds, " s"));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace cohort
