// RunCommand: runs a program to its end, feeding it text on stdin and collecting what it prints,
// as the orchestrator does with a batch system's commands (sbatch, squeue, scancel).
//
//   absl::StatusOr<CommandOutput> out = RunCommand({"squeue", "-h", "-j", "12"}, "", 30.0);
//   if (out.ok() && out->exit_code == 0) Parse(out->stdout_text);
//
// The program is found on PATH (execvp) and inherits the caller's environment; its stdin, stdout
// and stderr are pipes. Thread-safety: any thread (each call has its own pipes and child).
#ifndef COHORT_RUNTIME_BASE_RUN_COMMAND_H_
#define COHORT_RUNTIME_BASE_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

struct CommandOutput {
  int exit_code = 0;  // 128 + N when signal N ended it
  std::string stdout_text;
  std::string stderr_text;
};

// Runs argv[0] with `input` on its stdin (then closed) and waits for it. Errors, naming argv[0]:
// NOT_FOUND when it cannot be started (not on PATH), DEADLINE_EXCEEDED when it ran longer than
// `timeout_seconds` (it is then killed with SIGKILL and reaped), INVALID_ARGUMENT for an empty
// argv, INTERNAL when a pipe or fork fails. A program that runs and fails is not an error: its
// exit code and output say how it failed.
absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                         const std::string& input, double timeout_seconds);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_RUN_COMMAND_H_
