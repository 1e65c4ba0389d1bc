// `cohort task list` and `cohort agent list`: what the cluster runs and where.
#include <optional>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/format/cluster_format.h"
#include "harness/cohort/format/experiment_json.h"

namespace cohort {
namespace {

constexpr char kTaskUsage[] =
    "usage: cohort task SUBCOMMAND [ARGS]\n"
    "\n"
    "  list   every task: its experiment and trial, slots, state, agents, and why it waits\n"
    "\n"
    "`cohort task SUBCOMMAND --help` explains its options.\n";

constexpr char kTaskListUsage[] =
    "usage: cohort task list [--json]\n"
    "\n"
    "Lists every task the orchestrator has: one per trial with training to do.\n"
    "A queued task shows the REASON it waits for slots.\n"
    "\n";

constexpr char kAgentListUsage[] =
    "usage: cohort agent list [--json]\n"
    "\n"
    "Lists the agents registered with the orchestrator: their slots, how many are\n"
    "busy, whether they are connected, and the tasks they run.\n"
    "\n";

int ListTasksCommand(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort task list",
                               absl::StrCat(kTaskListUsage, kOrchestratorOptionUsage),
                               {},
                               {},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const bool json = args->Has("--json");
  return AskAndPrint<TaskListing>(*args, ListTasks{}, [json](const TaskListing& reply) {
    return json ? TaskListingJson(reply) + "\n" : FormatTaskListing(reply);
  });
}

}  // namespace

int RunTaskCommand(const std::vector<std::string>& arguments) {
  return RunClientSubcommand("task", kTaskUsage, {{"list", ListTasksCommand}}, arguments);
}

int RunAgentListCommand(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort agent list",
                               absl::StrCat(kAgentListUsage, kOrchestratorOptionUsage),
                               {},
                               {},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const bool json = args->Has("--json");
  return AskAndPrint<AgentTable>(*args, ListAgents{}, [json](const AgentTable& reply) {
    return json ? AgentTableJson(reply) + "\n" : FormatAgentTable(reply);
  });
}

}  // namespace cohort
