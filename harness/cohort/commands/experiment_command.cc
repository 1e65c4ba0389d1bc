// `cohort experiment list | describe ID [--json] | kill ID`.
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/format/experiment_format.h"
#include "harness/cohort/format/experiment_json.h"

namespace cohort {
namespace {

constexpr char kExperimentUsage[] =
    "usage: cohort experiment SUBCOMMAND [ARGS]\n"
    "\n"
    "  list [--json]          every experiment the orchestrator knows\n"
    "  describe ID [--json]   an experiment's state, trials and latest metrics\n"
    "  kill ID                stop every trial of an experiment\n"
    "\n"
    "`cohort experiment SUBCOMMAND --help` explains its options.\n";

constexpr char kListUsage[] =
    "usage: cohort experiment list [--json]\n"
    "\n"
    "Lists every experiment the orchestrator knows, oldest first. TRIALS counts\n"
    "active/completed/stopped/errored trials.\n"
    "\n";

constexpr char kDescribeUsage[] =
    "usage: cohort experiment describe ID [--json]\n"
    "\n"
    "Shows an experiment: its state, searcher and progress, a table of its trials\n"
    "(BATCHES is trained/target), their latest validation metrics and errors.\n"
    "\n"
    "  --json                   print it as one JSON object instead\n";

constexpr char kKillUsage[] =
    "usage: cohort experiment kill ID\n"
    "\n"
    "Stops every trial of the experiment (its tasks get time to exit, then are\n"
    "killed). Killing an experiment that has ended does nothing.\n"
    "\n";

// The arguments of `cohort experiment <verb> ID ...` and the experiment id they name.
struct ExperimentArgs {
  ClientArgs args;
  uint64_t id = 0;
};

// Parses `arguments` by `spec`, whose one positional is ID; nullopt after printing --help or a
// usage problem, the exit status in `*exit_code`.
std::optional<ExperimentArgs> ParseExperimentArgs(const ClientCommandSpec& spec,
                                                  const std::vector<std::string>& arguments,
                                                  int* exit_code) {
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, exit_code);
  if (!args) return std::nullopt;
  const std::optional<uint64_t> id = ParseUnsigned(args->positionals[0]);
  if (!id || *id == 0) {
    *exit_code = ClientUsageError(
        spec,
        absl::StrCat("ID must be an experiment id (1, 2, ...), not '", args->positionals[0], "'"));
    return std::nullopt;
  }
  return ExperimentArgs{*std::move(args), *id};
}

double NowUnixTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int List(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort experiment list",
                               absl::StrCat(kListUsage, kOrchestratorOptionUsage),
                               {},
                               {},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const bool json = args->Has("--json");
  return AskAndPrint<ExperimentList>(*args, ListExperiments{}, [json](const ExperimentList& reply) {
    return json ? ExperimentListJson(reply) + "\n" : FormatExperimentList(reply);
  });
}

int Describe(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort experiment describe",
                               absl::StrCat(kDescribeUsage, kOrchestratorOptionUsage),
                               {"ID"},
                               {},
                               {"--json"}};
  int exit_code = 0;
  const std::optional<ExperimentArgs> parsed = ParseExperimentArgs(spec, arguments, &exit_code);
  if (!parsed) return exit_code;
  const bool json = parsed->args.Has("--json");
  return AskAndPrint<ExperimentDescription>(
      parsed->args, DescribeExperiment{parsed->id}, [json](const ExperimentDescription& reply) {
        return json ? ExperimentDescriptionJson(reply) + "\n"
                    : FormatExperimentDescription(reply, NowUnixTime());
      });
}

int Kill(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{
      "cohort experiment kill", absl::StrCat(kKillUsage, kOrchestratorOptionUsage), {"ID"}, {}, {}};
  int exit_code = 0;
  const std::optional<ExperimentArgs> parsed = ParseExperimentArgs(spec, arguments, &exit_code);
  if (!parsed) return exit_code;
  const uint64_t id = parsed->id;
  return AskAndPrint<ClientAck>(parsed->args, KillExperiment{id}, [id](const ClientAck&) {
    return absl::StrCat("experiment ", id, ": kill requested\n");
  });
}

}  // namespace

int RunExperimentCommand(const std::vector<std::string>& arguments) {
  return RunClientSubcommand("experiment", kExperimentUsage,
                             {{"list", List}, {"describe", Describe}, {"kill", Kill}}, arguments);
}

}  // namespace cohort
