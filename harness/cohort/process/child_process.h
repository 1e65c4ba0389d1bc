// RunInChild: runs a function in a forked child process, so that a plugin crashing inside it
// cannot take the caller down, and describes how the child ended.
#ifndef COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_
#define COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace cohort {

struct ChildExit {
  bool timed_out = false;  // still running at the time limit: killed (SIGKILL)
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // signal number when signaled
  // `body` returned, and its value is `code`; false when the child ended otherwise (a signal, the
  // time limit, or an exit() inside it: a plugin that ends its process itself).
  bool body_returned = false;
  // "exit code 3", "killed by signal 11 (SIGSEGV: Segmentation fault)".
  std::string Describe() const;
};

// Forks; the child runs `body` and exits with its return value. Output the child wrote to stdout
// and stderr is flushed before it exits; its stdout is line-buffered, so what it printed before a
// crash or the time limit is seen. A child still running after `time_limit_seconds` (none: no
// limit) is killed with SIGKILL, and its exit says timed_out.
absl::StatusOr<ChildExit> RunInChild(const std::function<int()>& body,
                                     std::optional<double> time_limit_seconds = std::nullopt);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_CHILD_PROCESS_H_
