// StopSignals: how a long-running `cohort` command learns that SIGINT, SIGTERM or SIGHUP (its
// terminal closed) asked it to stop. While a StopSignals is alive, each delivery of one of them is
// counted (no SA_RESTART, so a blocking wait returns at once with EINTR), and SIGPIPE is ignored:
// output to a pipe whose reader ended (`cohort run ... | head`) fails, and the command goes on
// instead of ending mid-training. A SIGHUP the process was started ignoring (`nohup cohort ...`)
// stays ignored (HangupIgnored). The previous handlers come back when it is destroyed.
//
//   StopSignals signals(StopSignals::Second::kEndsProcess);   // cohort orchestrator
//   server->Run(StopSignals::requested());
//
//   StopSignals signals(StopSignals::Second::kCounted);       // cohort run
//   if (StopSignals::count() >= 2) { /* kill at once */ }
//
// Thread-safety: one StopSignals at a time in a process; count() and requested() may be read from
// any thread.
#ifndef COHORT_HARNESS_COHORT_PROCESS_STOP_SIGNALS_H_
#define COHORT_HARNESS_COHORT_PROCESS_STOP_SIGNALS_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace cohort {

class StopSignals {
 public:
  // What a second signal does: counted like the first, or the signal's default action (the
  // process ends at once).
  enum class Second { kCounted, kEndsProcess };

  explicit StopSignals(Second second);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Signals received since the StopSignals was made.
  static int count();
  // True once one was received.
  static const std::atomic<bool>& requested();

 private:
  struct sigaction previous_[4] = {};  // SIGINT, SIGTERM, SIGHUP, SIGPIPE
  bool hangup_handled_ = false;        // false: SIGHUP was ignored, and stays so
};

// Starts `body` on a thread that never takes SIGINT, SIGTERM or SIGHUP, so that they reach the
// calling thread's StopSignals (a thread running an agent or a loop of its own, say).
std::thread StartWithoutStopSignals(std::function<void()> body);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_STOP_SIGNALS_H_
