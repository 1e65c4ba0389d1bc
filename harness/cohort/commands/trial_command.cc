// `cohort trial logs TRIAL_ID ... | describe TRIAL_ID [--json] | kill TRIAL_ID |
// diagnose TRIAL_ID`.
#include <optional>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/format/experiment_json.h"
#include "harness/cohort/format/trial_format.h"

namespace cohort {
namespace {

constexpr char kTrialUsage[] =
    "usage: cohort trial SUBCOMMAND [ARGS]\n"
    "\n"
    "  logs TRIAL_ID            a trial's output, every rank's stdout and stderr\n"
    "  describe TRIAL_ID        its state, hyperparameters, validations and checkpoints\n"
    "  kill TRIAL_ID            stop one trial; its experiment goes on without it\n"
    "  diagnose TRIAL_ID        which collective its ranks part at, from their flight records\n"
    "\n"
    "`cohort trial SUBCOMMAND --help` explains its options.\n";

constexpr char kDescribeUsage[] =
    "usage: cohort trial describe TRIAL_ID [--json]\n"
    "\n"
    "Shows one trial: its experiment, state, batches trained, restarts,\n"
    "hyperparameters, best searcher metric and latest training metrics, a table of\n"
    "every validation it reported and its checkpoints. TRIAL_ID is the TRIAL column\n"
    "of `cohort experiment describe`.\n"
    "\n"
    "  --json                   print it as one JSON object instead\n";

constexpr char kKillUsage[] =
    "usage: cohort trial kill TRIAL_ID\n"
    "\n"
    "Stops one trial: its task gets time to checkpoint and exit, then the trial ends\n"
    "stopped and its searcher goes on without it (as when a trial exits early).\n"
    "Killing a trial that has ended does nothing.\n"
    "\n";

constexpr char kDiagnoseUsage[] =
    "usage: cohort trial diagnose TRIAL_ID\n"
    "\n"
    "Reads the flight records of a trial of several slots (the last collectives\n"
    "each rank entered and left) from its running task, or from its last failed\n"
    "one, gathers them into the trial's folder (trials/<id>/flight_snapshot.json\n"
    "for a running task, until it ends; trials/<id>/flight_record.json for a\n"
    "failed one) and names the first collective the ranks part at: the ranks that\n"
    "entered it, those missing from it, and those whose process stopped\n"
    "answering. Use it on a trial that seems to hang, before\n"
    "optimizations.collective_timeout ends it.\n"
    "\n";

// Parses `arguments` by `spec`, whose one positional is TRIAL_ID, into `*args` and the id;
// nullopt after printing --help or a usage problem, the exit status in `*exit_code`.
std::optional<uint64_t> ParseTrialArgs(const ClientCommandSpec& spec,
                                       const std::vector<std::string>& arguments,
                                       std::optional<ClientArgs>* args, int* exit_code) {
  *args = ParseClientArgs(spec, arguments, exit_code);
  if (!*args) return std::nullopt;
  return ParseId(spec, (*args)->positionals[0], "TRIAL_ID", "trial", exit_code);
}

int Describe(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort trial describe",
                               absl::StrCat(kDescribeUsage, kOrchestratorOptionUsage),
                               {"TRIAL_ID"},
                               {},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args;
  const std::optional<uint64_t> id = ParseTrialArgs(spec, arguments, &args, &exit_code);
  if (!id) return exit_code;
  const bool json = args->Has("--json");
  return AskAndPrint<TrialDescription>(
      *args, DescribeTrial{*id}, [json](const TrialDescription& reply) {
        return json ? TrialDescriptionJson(reply) + "\n" : FormatTrialDescription(reply);
      });
}

int Kill(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort trial kill",
                               absl::StrCat(kKillUsage, kOrchestratorOptionUsage),
                               {"TRIAL_ID"},
                               {},
                               {}};
  int exit_code = 0;
  std::optional<ClientArgs> args;
  const std::optional<uint64_t> id = ParseTrialArgs(spec, arguments, &args, &exit_code);
  if (!id) return exit_code;
  // An ended trial has nothing to kill: said, and still a success.
  const absl::StatusOr<TrialDescription> before =
      AskOrchestrator<TrialDescription>(*args, DescribeTrial{*id});
  if (!before.ok()) return ClientFailure(before.status());
  if (const TrialState state = before->trial.state; TrialEnded(state)) {
    std::printf("trial %llu is %s already: nothing to kill\n", static_cast<unsigned long long>(*id),
                std::string(TrialStateName(state)).c_str());
    return 0;
  }
  return AskAndPrint<ClientAck>(*args, KillTrial{*id}, [id](const ClientAck&) {
    return absl::StrCat("trial ", *id, ": kill requested\n");
  });
}

std::string FormatDiagnosis(const TrialDiagnosis& d) {
  std::string text = absl::StrCat("trial ", d.trial_id, ", task ", d.task_id,
                                  d.running ? " (running)" : " (ended)", ": ", d.summary, "\n");
  for (const std::string& line : d.ranks) absl::StrAppend(&text, "  ", line, "\n");
  if (d.running) {
    // A snapshot of a healthy trial parts its ranks too, at the collective in flight.
    absl::StrAppend(&text,
                    "note: the trial is running, so this may be the collective in flight; ask "
                    "again: a hang keeps the ranks at the same collective, waiting longer\n");
  }
  absl::StrAppend(&text, "records: ", d.record_path, "\n");
  return text;
}

int Diagnose(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort trial diagnose",
                               absl::StrCat(kDiagnoseUsage, kOrchestratorOptionUsage),
                               {"TRIAL_ID"},
                               {},
                               {}};
  int exit_code = 0;
  std::optional<ClientArgs> args;
  const std::optional<uint64_t> id = ParseTrialArgs(spec, arguments, &args, &exit_code);
  if (!id) return exit_code;
  return AskAndPrint<TrialDiagnosis>(*args, DiagnoseTrial{*id}, FormatDiagnosis);
}

}  // namespace

int RunTrialCommand(const std::vector<std::string>& arguments) {
  return RunClientSubcommand("trial", kTrialUsage,
                             {{"logs", RunTrialLogsCommand},
                              {"describe", Describe},
                              {"kill", Kill},
                              {"diagnose", Diagnose}},
                             arguments);
}

}  // namespace cohort
