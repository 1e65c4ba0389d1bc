#include "harness/cohort/process/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

namespace cohort {

std::string ChildExit::Describe() const {
  if (!signaled) return absl::StrCat("exit code ", code);
  const char* abbrev = sigabbrev_np(signal);
  return absl::StrCat("killed by signal ", signal, " (SIG", abbrev == nullptr ? "?" : abbrev, ": ",
                      strsignal(signal), ")");
}

absl::StatusOr<ChildExit> RunInChild(const std::function<int()>& body,
                                     std::optional<double> time_limit_seconds) {
  // The child writes one byte here once `body` returned: an exit() inside it writes none.
  int returned[2];
  if (::pipe2(returned, O_CLOEXEC | O_NONBLOCK) != 0) return absl::ErrnoToStatus(errno, "pipe");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(returned[0]);
    ::close(returned[1]);
    return absl::ErrnoToStatus(error, "fork");
  }
  if (pid == 0) {
    ::close(returned[0]);
    // A crash in the child should end it by the signal itself, not by a handler the parent
    // installed (sanitizers install one for SIGSEGV).
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    std::signal(SIGFPE, SIG_DFL);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const int code = body();
    std::fflush(stdout);
    std::fflush(stderr);
    const char done = 1;
    (void)!::write(returned[1], &done, 1);
    ::_exit(code);
  }
  ::close(returned[1]);
  using Clock = std::chrono::steady_clock;
  const std::optional<Clock::time_point> deadline =
      time_limit_seconds
          ? std::optional<Clock::time_point>(
                Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(*time_limit_seconds)))
          : std::nullopt;
  ChildExit exit;
  int status = 0;
  for (;;) {
    const pid_t ended = ::waitpid(pid, &status, deadline ? WNOHANG : 0);
    if (ended == pid) break;
    if (ended < 0 && errno != EINTR) {
      const int error = errno;
      ::close(returned[0]);
      return absl::ErrnoToStatus(error, "waitpid");
    }
    if (deadline && !exit.timed_out && Clock::now() >= *deadline) {
      exit.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) {
    exit.signaled = true;
    exit.signal = WTERMSIG(status);
  } else {
    exit.code = WEXITSTATUS(status);
  }
  // Non-blocking: a process the child started may hold the pipe open still.
  char done = 0;
  ssize_t read = 0;
  do {
    read = ::read(returned[0], &done, 1);
  } while (read < 0 && errno == EINTR);
  ::close(returned[0]);
  exit.body_returned = read == 1 && !exit.signaled;
  return exit;
}

}  // namespace cohort
