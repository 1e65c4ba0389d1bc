#include "harness/cohort/process/child_process.h"

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
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    // A crash in the child should end it by the signal itself, not by a handler the parent
    // installed (sanitizers install one for SIGSEGV).
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    std::signal(SIGFPE, SIG_DFL);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const int code = body();
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }
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
    if (ended < 0 && errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid");
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
  return exit;
}

}  // namespace cohort
