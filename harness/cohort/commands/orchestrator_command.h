// `cohort orchestrator`: the orchestrator daemon. Agents register their slots with it and run the
// tasks it places; clients (`cohort submit`, `cohort experiment ...`) send it requests
// (runtime/orchestrator/orchestrator_server.h; docs/protocol.md).
//
//   cohort orchestrator [--listen EP] [--client-listen EP] [--state-dir DIR]
//                       [--checkpoint-root DIR] [--agent-timeout SECONDS]
//
// Exit status: 0 after SIGINT or SIGTERM, 1 on an error, 2 on bad usage.
//
// Thread-safety: runs on the calling thread, the process's main one; installs handlers for
// SIGINT and SIGTERM while it runs.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_ORCHESTRATOR_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_ORCHESTRATOR_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunOrchestratorCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_ORCHESTRATOR_COMMAND_H_
