// ProcessState: a process's state letter as the kernel shows it in /proc/<pid>/stat ('R'
// running, 'S' sleeping, 'T' stopped by a signal, 't' stopped by a debugger, 'Z' a zombie, ...).
//
//   if (ProcessState(pid) == 'T') ...   // stopped by SIGSTOP, SIGTSTP (Ctrl-Z), ...
//
// Thread-safety: reads /proc; safe from any thread.
#ifndef COHORT_RUNTIME_BASE_PROCESS_STATE_H_
#define COHORT_RUNTIME_BASE_PROCESS_STATE_H_

#include <optional>

namespace cohort {

// nullopt for a process that cannot be read (gone, not ours to see, or pid <= 0).
std::optional<char> ProcessState(int pid);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_PROCESS_STATE_H_
