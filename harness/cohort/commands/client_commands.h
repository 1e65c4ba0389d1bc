// The client commands: what a user asks a running `cohort orchestrator` (docs/protocol.md).
//
//   cohort submit EXPERIMENT.yaml [--set KEY=VALUE]... [--follow]
//   cohort experiment list [--all] | describe ID [--json] | kill ID | pause ID | activate ID |
//                     archive ID | unarchive ID | delete ID [--yes]
//   cohort task list
//   cohort agent list
//   cohort trial logs TRIAL_ID [--follow] [--rank R] [--tail N] | describe ID [--json] | kill ID
//   cohort checkpoint list EXPERIMENT_ID [--trial T] [--json] | export CHECKPOINT_ID DIR
//
// Each takes `--orchestrator ENDPOINT` (default: $COHORT_ORCHESTRATOR, else
// tcp://127.0.0.1:29401) and `--help`. `arguments` are those after the command's words
// ("submit", "experiment", "task", "trial", "agent list"). Exit status: 0 done, 1 error
// ("error: <message>" on stderr), 2 bad usage; `submit --follow` exits 0 when the experiment
// completed, 1 on its error and 130 when it was stopped.
//
// Thread-safety: each runs on the calling thread and prints to stdout and stderr.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_CLIENT_COMMANDS_H_
#define COHORT_HARNESS_COHORT_COMMANDS_CLIENT_COMMANDS_H_

#include <string>
#include <vector>

namespace cohort {

int RunSubmitCommand(const std::vector<std::string>& arguments);
int RunExperimentCommand(const std::vector<std::string>& arguments);
int RunTaskCommand(const std::vector<std::string>& arguments);
int RunTrialCommand(const std::vector<std::string>& arguments);
int RunTrialLogsCommand(const std::vector<std::string>& arguments);  // `cohort trial logs`
int RunCheckpointCommand(const std::vector<std::string>& arguments);
int RunAgentListCommand(const std::vector<std::string>& arguments);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_CLIENT_COMMANDS_H_
