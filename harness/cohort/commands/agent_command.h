// `cohort agent`: the agent daemon of one machine. It connects to an orchestrator, registers
// this machine's slots and runs the tasks the orchestrator gives it (runtime/agent/agent.h;
// docs/protocol.md).
//
//   cohort agent --orchestrator tcp://10.0.0.5:29400 [--id ID] [--slots N|auto] [--work-dir DIR]
//
// Exit status: 0 after SIGINT or SIGTERM once every task has exited, 1 on an error, 2 on bad
// usage.
//
// Thread-safety: runs on the calling thread, the process's main one.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_AGENT_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_AGENT_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunAgentCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_AGENT_COMMAND_H_
