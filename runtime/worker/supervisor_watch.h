// SupervisorWatch: a worker thread that stops this process while its supervisor (the agent that
// started it, or `cohort run`'s) is stopped by a signal (SIGSTOP; Ctrl-Z's SIGTSTP), so that a
// stopped agent's ranks do not train on unseen: past the orchestrator's agent timeout the trial
// is placed again elsewhere, and two copies of one rank would write the same trial's checkpoints.
// A worker runs in a process group of its own, which a signal to its supervisor's group misses.
//
// It looks every `period_seconds`; when the supervisor's state is 'T' it sends SIGSTOP to this
// process's group when it leads one (a worker and what it started), else to this process. The supervisor sends SIGCONT to its workers when it is continued itself (Agent), so
// the rank goes on with it, and `on_resumed` is told how long it was stopped. A supervisor under
// a debugger (state 't') is left alone: it gets no SIGCONT to pass on.
//
//   SupervisorWatch watch(getppid(), 0.5, [](double seconds) { ... log it ... });
//
// Thread-safety: its own thread reads /proc; construct and destroy on one thread.
#ifndef COHORT_RUNTIME_WORKER_SUPERVISOR_WATCH_H_
#define COHORT_RUNTIME_WORKER_SUPERVISOR_WATCH_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cohort {

// How often a worker looks at its supervisor's state.
inline constexpr double kSupervisorWatchSeconds = 0.5;

class SupervisorWatch {
 public:
  SupervisorWatch(int supervisor_pid, double period_seconds,
                  std::function<void(double stopped_seconds)> on_resumed);
  ~SupervisorWatch();
  SupervisorWatch(const SupervisorWatch&) = delete;
  SupervisorWatch& operator=(const SupervisorWatch&) = delete;

 private:
  void Watch();

  const int supervisor_pid_;
  const double period_seconds_;
  const std::function<void(double)> on_resumed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_WORKER_SUPERVISOR_WATCH_H_
