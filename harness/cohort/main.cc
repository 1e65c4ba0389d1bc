// cohort: the command-line entry point. Each subcommand lives in its own file.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"
#include "harness/cohort/commands/agent_command.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/commands/doctor_command.h"
#include "harness/cohort/commands/keygen_command.h"
#include "harness/cohort/commands/launch_command.h"
#include "harness/cohort/commands/orchestrator_command.h"
#include "harness/cohort/commands/plugin_command.h"
#include "harness/cohort/commands/report_command.h"
#include "harness/cohort/commands/run_command.h"
#include "harness/cohort/commands/worker_command.h"
#include "runtime/text/closest_name.h"

namespace {

constexpr char kMainUsage[] =
    "usage: cohort COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run EXPERIMENT.yaml    train an experiment on this machine (see `cohort run --help`)\n"
    "  launch EXPERIMENT.yaml one rank of a trial that torchrun, srun or mpirun started\n"
    "                         (`cohort launch --help`)\n"
    "  plugin info PLUGIN     load a model plugin and describe it\n"
    "  plugin check PLUGIN    load it, create a model and run the conformance checks\n"
    "  agent                  run this machine's agent for an orchestrator (`cohort agent "
    "--help`)\n"
    "  orchestrator           run the orchestrator for agents and clients (`cohort orchestrator "
    "--help`)\n"
    "  report RUN_DIR...      write an HTML report of run folders (`cohort report --help`)\n"
    "  doctor                 check whether this host can run GPU trials, and what to fix\n"
    "  keygen --out DIR       make a CURVE key pair for the control channels\n"
    "  version                print the Cohort and plugin ABI versions\n"
    "\n"
    "commands that ask a running orchestrator (--orchestrator ENDPOINT; default\n"
    "$COHORT_ORCHESTRATOR, else tcp://127.0.0.1:29401):\n"
    "  submit EXPERIMENT.yaml    submit an experiment (`--follow` to watch it)\n"
    "  experiment list           the experiments, their progress and trial counts\n"
    "  experiment describe ID    an experiment's trials and metrics\n"
    "  experiment kill ID        stop an experiment\n"
    "  experiment pause|activate ID     pause an experiment's trials, or let them go on\n"
    "  experiment archive|unarchive ID  hide an ended experiment from the list, or not\n"
    "  experiment delete ID      remove an ended experiment and its checkpoints\n"
    "  task list                 every task, where it runs and why it waits\n"
    "  agent list                the registered agents and their slots\n"
    "  trial logs TRIAL_ID       a trial's output (`--follow` for new lines)\n"
    "  trial describe TRIAL_ID   a trial's validations and checkpoints\n"
    "  trial kill TRIAL_ID       stop one trial\n"
    "  trial diagnose TRIAL_ID   which collective its ranks part at (flight records)\n"
    "  checkpoint list EXPERIMENT_ID     the checkpoints an experiment keeps\n"
    "  checkpoint export CHECKPOINT_ID DIR  copy a checkpoint, verified, into DIR\n"
    "As with Determined's CLI, `e` abbreviates experiment, `t` trial, `c` checkpoint,\n"
    "and `ls` list.\n"
    "\n"
    "`cohort COMMAND --help` explains a command's options.\n";

// `cohort agent list` asks the orchestrator; `cohort agent [OPTIONS]` runs an agent.
int RunAgentOrAgentList(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "list" || args[0] == "ls")) {
    return cohort::RunAgentListCommand({args.begin() + 1, args.end()});
  }
  return cohort::RunAgentCommand(args);
}

struct Command {
  const char* name;
  const char* abbreviation;  // as Determined's CLI abbreviates it ("" for none)
  int (*run)(const std::vector<std::string>& args);
};

constexpr Command kCommands[] = {
    {"run", "", cohort::RunRunCommand},
    {"launch", "", cohort::RunLaunchCommand},
    {"worker", "", cohort::RunWorkerCommand},
    {"submit", "", cohort::RunSubmitCommand},
    {"experiment", "e", cohort::RunExperimentCommand},
    {"task", "", cohort::RunTaskCommand},
    {"trial", "t", cohort::RunTrialCommand},
    {"agent", "", RunAgentOrAgentList},
    {"orchestrator", "", cohort::RunOrchestratorCommand},
    {"plugin", "", cohort::RunPluginCommand},
    {"report", "", cohort::RunReportCommand},
    {"doctor", "", cohort::RunDoctorCommand},
    {"keygen", "", cohort::RunKeygenCommand},
    {"checkpoint", "c", cohort::RunCheckpointCommand},
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr lines in order
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::fputs(kMainUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::printf("cohort %s (plugin ABI %d.%d)\n", COHORT_VERSION, COHORT_ABI_VERSION_MAJOR,
                COHORT_ABI_VERSION_MINOR);
    return 0;
  }
  std::vector<absl::string_view> names = {"version", "help"};
  for (const Command& command : kCommands) {
    if (args[0] == command.name || args[0] == command.abbreviation) {
      return command.run({args.begin() + 1, args.end()});
    }
    if (command.name != std::string_view("worker")) names.push_back(command.name);
  }
  const std::optional<std::string> near = cohort::ClosestName(args[0], names);
  std::fprintf(stderr, "unknown command '%s'%s\n\n%s", args[0].c_str(),
               near ? absl::StrCat("; did you mean '", *near, "'?").c_str() : "", kMainUsage);
  return 2;
}
