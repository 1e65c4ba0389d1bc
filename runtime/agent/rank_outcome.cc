#include "runtime/agent/rank_outcome.h"

#include <string.h>

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/process_state.h"

namespace cohort {

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return absl::StrCat("signal ", signal,
                      abbrev == nullptr ? "" : absl::StrCat(" (SIG", abbrev, ")"));
}

TaskExit ExitOfRank(uint64_t task_id, uint32_t rank, const RankOutcome& outcome,
                    const std::string& stop_reason) {
  TaskExit exit;
  exit.task_id = task_id;
  exit.rank = static_cast<int32_t>(rank);
  exit.killed_by_agent = outcome.signaled_by_agent;
  // Stopped when signalled and still stopped at its end: a stopped process takes no signal but
  // SIGKILL (and SIGCONT), so a rank that exited with a code of its own had gone on. A process that
  // is exiting can look stopped for a moment (a leak checker at exit stops it with ptrace).
  exit.stopped = outcome.was_stopped && outcome.term_signal != 0;
  if (!outcome.spawned) {
    exit.exit_code = 127;
    exit.reason = outcome.spawn_error.empty() ? "not started: another rank could not be started"
                                              : outcome.spawn_error;
    return exit;
  }
  exit.signal = outcome.term_signal;
  exit.exit_code = static_cast<int32_t>(outcome.exit_status);
  if (outcome.term_signal != 0) {
    exit.reason =
        outcome.killed_after_grace
            ? absl::StrCat("killed after the grace period (", SignalName(outcome.term_signal), ")")
            : absl::StrCat("killed by ", SignalName(outcome.term_signal));
  } else if (outcome.finished) {
    switch (outcome.finished->exit) {
      case TrialExit::kCompleted:
        exit.reason = "completed";
        break;
      case TrialExit::kStopped:
        exit.reason = stop_reason.empty() ? "stopped" : absl::StrCat("stopped: ", stop_reason);
        break;
      case TrialExit::kFailed:
        exit.reason = absl::StrCat("failed: ", outcome.finished->message);
        break;
    }
  } else {
    exit.reason = absl::StrCat("exit code ", outcome.exit_status, " without finishing the trial");
    exit.unfinished = true;
  }
  if (exit.stopped) {
    absl::StrAppend(&exit.reason,
                    "; its process was stopped (SIGSTOP or a debugger): it is the "
                    "rank the others waited for");
  }
  return exit;
}

bool StoppedTheTrial(const TaskExit& exit) {
  return exit.signal == 0 && exit.exit_code == 0 && !exit.unfinished &&
         (exit.reason == "stopped" || absl::StartsWith(exit.reason, "stopped: "));
}

bool ProcessIsStopped(int pid) {
  const std::optional<char> state = ProcessState(pid);
  return state == 'T' || state == 't';
}

}  // namespace cohort
