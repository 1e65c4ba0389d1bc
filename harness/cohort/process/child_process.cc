#include "harness/cohort/process/child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cohort {

std::string ChildExit::Describe() const {
  if (!signaled) return absl::StrCat("exit code ", code);
  const char* abbrev = sigabbrev_np(signal);
  return absl::StrCat("killed by signal ", signal, " (SIG", abbrev == nullptr ? "?" : abbrev, ": ",
                      strsignal(signal), ")");
}

absl::StatusOr<ChildExit> RunInChild(const std::function<int()>& body) {
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
    const int code = body();
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid");
  }
  ChildExit exit;
  if (WIFSIGNALED(status)) {
    exit.signaled = true;
    exit.signal = WTERMSIG(status);
  } else {
    exit.code = WEXITSTATUS(status);
  }
  return exit;
}

}  // namespace cohort
