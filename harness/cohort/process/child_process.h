// RunInChild: runs a function in a forked child process, so that a plugin crashing inside it
// cannot take the caller down, and describes how the child ended.
#ifndef COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_
#define COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace cohort {

struct ChildExit {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // signal number when signaled
  // "exit code 3", "killed by signal 11 (SIGSEGV: Segmentation fault)".
  std::string Describe() const;
};

// Forks; the child runs `body` and exits with its return value. Output the child wrote to stdout
// and stderr is flushed before it exits.
absl::StatusOr<ChildExit> RunInChild(const std::function<int()>& body);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_
