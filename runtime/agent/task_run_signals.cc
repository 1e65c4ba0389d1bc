// TaskRun's signals to its ranks: a kill with its grace period, then SIGKILL, and SIGCONT when
// the agent goes on after being stopped (task_run.h).
#include <csignal>
#include <memory>
#include <string>

#include "runtime/agent/rank_outcome.h"
#include "runtime/agent/task_run.h"

namespace cohort {

void TaskRun::Signal(Rank& rank, int signal) {
  if (!rank.running) return;
  // Seen before the signal: a stopped rank is what its peers on other agents waited for.
  // A stopped process cannot say it is the one its peers timed out waiting for, so its TaskExit
  // says so (`stopped`).
  rank.outcome.was_stopped = rank.outcome.was_stopped || ProcessIsStopped(rank.pid);
  rank.outcome.signaled_by_agent = true;
  // The whole group: whatever the worker started goes too. The worker leads its group.
  if (::kill(static_cast<pid_t>(-rank.pid), signal) != 0) uv_process_kill(&rank.process, signal);
}

void TaskRun::Continue() {
  for (const std::unique_ptr<Rank>& rank : ranks_) {
    if (rank->running) ::kill(static_cast<pid_t>(-rank->pid), SIGCONT);
  }
}

void TaskRun::Kill(absl::string_view reason, uint32_t grace_seconds) {
  bool any_running = false;
  for (const std::unique_ptr<Rank>& rank : ranks_) any_running = any_running || rank->running;
  if (!any_running) return;
  if (state_ != TaskState::kStopping) {
    stop_reason_ = std::string(reason);
    SetState(TaskState::kStopping);
    for (std::unique_ptr<Rank>& rank : ranks_) {
      if (grace_seconds == 0) break;  // no time to stop: SIGKILL below
      if (rank->said_hello) hub_->Send(rank->peer, StopCommand{stop_reason_}).IgnoreError();
      Signal(*rank, SIGTERM);
    }
  }
  if (grace_seconds == 0) {
    uv_timer_stop(&grace_timer_);
    grace_deadline_ = 0;
    for (std::unique_ptr<Rank>& rank : ranks_) Signal(*rank, SIGKILL);
    return;
  }
  const double deadline = static_cast<double>(uv_now(loop_)) + 1000.0 * grace_seconds;
  if (grace_deadline_ != 0 && grace_deadline_ <= deadline) return;
  grace_deadline_ = deadline;
  uv_timer_start(&grace_timer_, OnGraceOver, uint64_t{grace_seconds} * 1000, 0);
}

void TaskRun::OnGraceOver(uv_timer_t* timer) {
  TaskRun& run = *static_cast<TaskRun*>(timer->data);
  run.grace_deadline_ = 0;
  for (std::unique_ptr<Rank>& rank : run.ranks_) {
    if (!rank->running) continue;
    rank->outcome.killed_after_grace = true;
    run.Signal(*rank, SIGKILL);
  }
}

}  // namespace cohort
