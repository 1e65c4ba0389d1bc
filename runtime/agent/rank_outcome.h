// RankOutcome: how one rank's worker process ended, as its agent saw it, and the TaskExit that
// tells the orchestrator (its reason is the line `cohort task list` and the trial's record show).
//
//   RankOutcome outcome;
//   outcome.spawned = true;
//   outcome.term_signal = SIGKILL;
//   TaskExit exit = ExitOfRank(task_id, /*rank=*/1, outcome, /*stop_reason=*/"");
//   // exit.reason == "killed by signal 9 (SIGKILL)"
//
// Thread-safety: plain values and pure functions (ProcessIsStopped reads /proc).
#ifndef COHORT_RUNTIME_AGENT_RANK_OUTCOME_H_
#define COHORT_RUNTIME_AGENT_RANK_OUTCOME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/control/control_messages.h"

namespace cohort {

struct RankOutcome {
  bool spawned = false;
  std::string spawn_error;  // why it could not be spawned
  int64_t exit_status = 0;
  int term_signal = 0;
  bool signaled_by_agent = false;
  bool killed_after_grace = false;
  bool was_stopped = false;  // its process was stopped (SIGSTOP) when the agent signalled it;
                             // ExitOfRank names it stopped only if a signal ended it
  std::optional<TrialFinished> finished;  // what the worker said last, if it said it
};

// The TaskExit of rank `rank` of task `task_id`. A signal says which and whether the grace period
// ran out; else the worker's TrialFinished says how the trial ended (a stop with `stop_reason`
// when one was given); a process that exited without one says its exit code. A rank found stopped
// is named as the one its peers waited for.
TaskExit ExitOfRank(uint64_t task_id, uint32_t rank, const RankOutcome& outcome,
                    const std::string& stop_reason);

// Whether `exit` (ExitOfRank's) tells of a trial its worker stopped on request, checkpointed:
// neither completed nor failed (a stop the orchestrator asked for, as its own SIGTERM does).
bool StoppedTheTrial(const TaskExit& exit);

// "signal 9 (SIGKILL)".
std::string SignalName(int signal);

// Whether process `pid` is stopped (SIGSTOP, a debugger), as /proc/<pid>/stat says: what decides
// RankOutcome::was_stopped. False for a process that cannot be read (gone, or pid <= 0).
bool ProcessIsStopped(int pid);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_RANK_OUTCOME_H_
