// `cohort experiment list [--all] [--json] | describe ID|RUN_DIR [--json] | kill ID | pause ID |
// activate ID | archive ID | unarchive ID | delete ID [--yes]`.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/format/experiment_format.h"
#include "harness/cohort/format/experiment_json.h"
#include "harness/cohort/run/run_summary.h"
#include "runtime/record/experiment_record_reader.h"
#include "runtime/record/run_folder.h"

namespace cohort {
namespace {

constexpr char kExperimentUsage[] =
    "usage: cohort experiment SUBCOMMAND [ARGS]\n"
    "\n"
    "  list [--all] [--json]  the experiments the orchestrator knows (--all: archived too)\n"
    "  describe ID [--json]   an experiment's state, trials and latest metrics (or a\n"
    "                         `cohort run` folder's, given its path)\n"
    "  kill ID                stop every trial of an experiment\n"
    "  pause ID               checkpoint and stop its running trials until activated\n"
    "  activate ID            let a paused experiment's trials go on from their checkpoints\n"
    "  archive ID             hide an ended experiment from `experiment list`\n"
    "  unarchive ID           show an archived experiment again\n"
    "  delete ID [--yes]      remove an ended experiment, its run folder and checkpoints\n"
    "\n"
    "`cohort experiment SUBCOMMAND --help` explains its options.\n";

constexpr char kListUsage[] =
    "usage: cohort experiment list [--all] [--json]\n"
    "\n"
    "Lists the experiments the orchestrator knows, oldest first, leaving out archived\n"
    "ones. TRIALS counts active/completed/stopped/errored trials.\n"
    "\n"
    "  --all                    archived experiments too\n"
    "  --json                   print an array of one JSON object per experiment\n";

constexpr char kDescribeUsage[] =
    "usage: cohort experiment describe ID [--json]\n"
    "       cohort experiment describe RUN_DIR [--json]\n"
    "\n"
    "Shows an experiment: its state, searcher and progress, a table of its trials\n"
    "(BATCHES is trained/target), their latest validation metrics and errors.\n"
    "Given the folder of a `cohort run` instead, shows what its experiment.json\n"
    "holds (as `cohort run` sums it up at its end), asking no orchestrator.\n"
    "\n"
    "  --json                   print it as one JSON object instead (a run folder's\n"
    "                           experiment.json as it is)\n";

constexpr char kKillUsage[] =
    "usage: cohort experiment kill ID\n"
    "\n"
    "Stops every trial of the experiment (its tasks get time to exit, then are\n"
    "killed). Killing an experiment that has ended does nothing.\n"
    "\n";

constexpr char kPauseUsage[] =
    "usage: cohort experiment pause ID\n"
    "\n"
    "Pauses an active experiment: each running trial checkpoints and stops (its task\n"
    "gets time to exit, as with kill), queued trials stay queued, and no trial trains\n"
    "until `cohort experiment activate ID`. Pausing a paused experiment does nothing;\n"
    "one that has ended is refused.\n"
    "\n";

constexpr char kActivateUsage[] =
    "usage: cohort experiment activate ID\n"
    "\n"
    "Activates a paused experiment: its trials go on, each from its latest checkpoint.\n"
    "Activating an active experiment does nothing; one that has ended is refused.\n"
    "\n";

constexpr char kArchiveUsage[] =
    "usage: cohort experiment archive ID\n"
    "\n"
    "Archives an ended experiment: `cohort experiment list` leaves it out unless --all.\n"
    "Nothing is deleted. An active or paused experiment is refused (kill it first).\n"
    "\n";

constexpr char kUnarchiveUsage[] =
    "usage: cohort experiment unarchive ID\n"
    "\n"
    "Puts an archived experiment back in `cohort experiment list`.\n"
    "\n";

constexpr char kDeleteUsage[] =
    "usage: cohort experiment delete ID [--yes]\n"
    "\n"
    "Deletes an ended experiment: its run folder on the orchestrator (config, metrics,\n"
    "logs, TensorBoard events) and the checkpoints the orchestrator stored for it. Its\n"
    "ids are never used again. Asks for confirmation on a terminal; an active or\n"
    "paused experiment is refused (kill it first).\n"
    "\n"
    "  --yes                    do not ask\n";

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
  const std::optional<uint64_t> id =
      ParseId(spec, args->positionals[0], "ID", "experiment", exit_code);
  if (!id) return std::nullopt;
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
                               {"--json", "--all"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const bool json = args->Has("--json");
  ListExperiments request;
  request.include_archived = args->Has("--all");
  return AskAndPrint<ExperimentList>(*args, request, [json](const ExperimentList& reply) {
    return json ? ExperimentListJson(reply) + "\n" : FormatExperimentList(reply);
  });
}

// `cohort experiment describe RUN_DIR`: the run folder's experiment.json, summed up as `cohort
// run` does at its end, or as it is (`json`).
int DescribeRunFolder(const std::string& path, bool json) {
  absl::StatusOr<RunFolder> folder = RunFolder::Open(path);
  if (!folder.ok()) return CommandError(folder.status().message());
  if (json) {
    std::ifstream in(folder->experiment_json_path(), std::ios::binary);
    if (!in) {
      return CommandError(absl::StrCat(folder->experiment_json_path(), ": cannot be read"));
    }
    std::cout << in.rdbuf();
    return std::cout.good() ? 0 : 1;
  }
  absl::StatusOr<ExperimentRecord> record = ReadExperimentRecord(folder->experiment_json_path());
  if (!record.ok()) return CommandError(record.status().message());
  PrintRunSummary(*record, folder->path(), stdout);
  return 0;
}

int Describe(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort experiment describe",
                               absl::StrCat(kDescribeUsage, kOrchestratorOptionUsage),
                               {"ID"},
                               {},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const bool json = args->Has("--json");
  std::error_code error;
  const std::string& target = args->positionals[0];
  if (std::filesystem::is_directory(target, error)) return DescribeRunFolder(target, json);
  if (target.find('/') != std::string::npos) {
    return UsageError(
        spec.command,
        absl::StrCat("'", target, "' is no experiment id, and no such run folder exists"),
        spec.usage);
  }
  const std::optional<ExperimentArgs> parsed = ParseExperimentArgs(spec, arguments, &exit_code);
  if (!parsed) return exit_code;
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
  // An ended experiment has nothing to kill: said, and still a success.
  const absl::StatusOr<ExperimentDescription> before =
      AskOrchestrator<ExperimentDescription>(parsed->args, DescribeExperiment{id});
  if (!before.ok()) return ClientFailure(before.status());
  if (ExperimentEnded(before->summary.state)) {
    std::printf("experiment %llu is %s already: nothing to kill\n",
                static_cast<unsigned long long>(id),
                std::string(ExperimentStateName(before->summary.state)).c_str());
    return 0;
  }
  return AskAndPrint<ClientAck>(parsed->args, KillExperiment{id}, [id](const ClientAck&) {
    return absl::StrCat("experiment ", id, ": kill requested\n");
  });
}

// `cohort experiment <verb> ID` for a ChangeExperiment: "experiment 3: paused".
ClientSubcommand ChangeCommand(ExperimentChangeKind change, const char* usage, const char* done) {
  return [change, usage, done](const std::vector<std::string>& arguments) {
    const std::string verb(ExperimentChangeName(change));
    const bool deleting = change == ExperimentChangeKind::kDelete;
    const ClientCommandSpec spec{
        absl::StrCat("cohort experiment ", verb),
        absl::StrCat(usage, kOrchestratorOptionUsage),
        {"ID"},
        {},
        deleting ? std::vector<std::string>{"--yes"} : std::vector<std::string>{}};
    int exit_code = 0;
    const std::optional<ExperimentArgs> parsed = ParseExperimentArgs(spec, arguments, &exit_code);
    if (!parsed) return exit_code;
    const uint64_t id = parsed->id;
    // Pausing a paused experiment, activating an active one, archiving an archived one or
    // unarchiving one that is not has nothing to do: said, and still a success.
    if (change != ExperimentChangeKind::kDelete) {
      const absl::StatusOr<ExperimentDescription> before =
          AskOrchestrator<ExperimentDescription>(parsed->args, DescribeExperiment{id});
      if (!before.ok()) return ClientFailure(before.status());
      std::optional<std::string> already;
      if (change == ExperimentChangeKind::kPause &&
          before->summary.state == ExperimentState::kPaused) {
        already = absl::StrCat(ExperimentStateName(ExperimentState::kPaused), " already");
      } else if (change == ExperimentChangeKind::kActivate &&
                 before->summary.state == ExperimentState::kActive) {
        already = absl::StrCat(ExperimentStateName(ExperimentState::kActive), " already");
      } else if (change == ExperimentChangeKind::kArchive && before->summary.archived) {
        already = "archived already";
      } else if (change == ExperimentChangeKind::kUnarchive && !before->summary.archived) {
        already = "not archived";
      }
      if (already) {
        std::printf("experiment %llu is %s: nothing to %s\n", static_cast<unsigned long long>(id),
                    already->c_str(), verb.c_str());
        return 0;
      }
    }
    if (deleting && !parsed->args.Has("--yes")) {
      if (!isatty(STDIN_FILENO)) {
        return ClientUsageError(spec, "deleting asks for confirmation: add --yes");
      }
      std::printf("Delete experiment %llu, its run folder and its checkpoints? [y/N] ",
                  static_cast<unsigned long long>(id));
      std::fflush(stdout);
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") {
        std::printf("experiment %llu: not deleted\n", static_cast<unsigned long long>(id));
        return 1;
      }
    }
    return AskAndPrint<ClientAck>(
        parsed->args, ChangeExperiment{id, change},
        [id, done](const ClientAck&) { return absl::StrCat("experiment ", id, ": ", done, "\n"); });
  };
}

}  // namespace

int RunExperimentCommand(const std::vector<std::string>& arguments) {
  return RunClientSubcommand(
      "experiment", kExperimentUsage,
      {{"list", List},
       {"describe", Describe},
       {"kill", Kill},
       {"pause", ChangeCommand(ExperimentChangeKind::kPause, kPauseUsage,
                               "paused (running trials checkpoint and stop)")},
       {"activate", ChangeCommand(ExperimentChangeKind::kActivate, kActivateUsage, "activated")},
       {"archive", ChangeCommand(ExperimentChangeKind::kArchive, kArchiveUsage, "archived")},
       {"unarchive",
        ChangeCommand(ExperimentChangeKind::kUnarchive, kUnarchiveUsage, "unarchived")},
       {"delete", ChangeCommand(ExperimentChangeKind::kDelete, kDeleteUsage, "deleted")}},
      arguments);
}

}  // namespace cohort
