// HangupIgnored: whether this process was started with SIGHUP ignored, as `nohup` starts a
// command so that it outlives its terminal. A command that stops on SIGHUP (its terminal closed)
// leaves it ignored then: the user asked for the command to survive the hangup.
//
//   if (!HangupIgnored()) InstallStopHandler(SIGHUP);
//
// Ask before installing any SIGHUP handler: the answer is the disposition at the time of the
// call. Thread-safety: reads the process's signal disposition; safe from any thread.
#ifndef COHORT_RUNTIME_BASE_HANGUP_IGNORED_H_
#define COHORT_RUNTIME_BASE_HANGUP_IGNORED_H_

#include <signal.h>

namespace cohort {

inline bool HangupIgnored() {
  struct sigaction current = {};
  return sigaction(SIGHUP, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_HANGUP_IGNORED_H_
