// The agent going on after it was stopped (SIGSTOP; Ctrl-Z of `cohort run`): its workers, which
// stopped themselves meanwhile (SupervisorWatch), go on with it (Agent, agent.h).
#include "absl/strings/str_cat.h"
#include "runtime/agent/agent.h"
#include "runtime/base/clock.h"

namespace cohort {

void Agent::OnContinued(uv_signal_t* handle, int) {
  Agent& agent = *static_cast<Agent*>(handle->data);
  const double now = SystemClock().MonotonicSeconds();
  if (!agent.runs_.empty()) {
    agent.Log(absl::StrCat("continued (SIGCONT): the ", agent.runs_.size(),
                           " task(s) here, stopped with the agent, go on"));
  }
  agent.continue_workers_until_ = now + kContinueWorkersSeconds;
  agent.ContinueWorkers(now);
}

void Agent::KeepContinuingWorkers(double now) {
  if (now < continue_workers_until_ &&
      now - workers_continued_at_ >= kContinueWorkersEverySeconds) {
    ContinueWorkers(now);
  }
}

void Agent::ContinueWorkers(double now) {
  workers_continued_at_ = now;
  for (auto& [task_id, run] : runs_) run->Continue();
}

}  // namespace cohort
