// What the client commands (`cohort submit`, `cohort experiment ...`, `cohort task list`,
// `cohort trial logs`, `cohort agent list`) share: argument parsing with `--orchestrator EP`,
// the CURVE keys (`--key FILE --orchestrator-key FILE_OR_Z85`) and `--help`, their defaults from
// the environment, one-shot requests, subcommand dispatch and the exit statuses.
//
//   const ClientCommandSpec spec{"cohort trial logs", usage, {"TRIAL_ID"}, {"--rank"},
//                                {"--follow"}};
//   int exit_code = 0;
//   std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
//   if (!args) return exit_code;   // --help (0), a usage error (2) or unreadable keys (1)
//   auto client = ConnectToOrchestrator(*args);
//
// Exit statuses: 0 done, 1 error ("error: <message>" on stderr), 2 bad usage.
//
// Thread-safety: reentrant; prints to stdout and stderr.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_CLIENT_ARGS_H_
#define COHORT_HARNESS_COHORT_COMMANDS_CLIENT_ARGS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/client/orchestrator_client.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

// The help lines of the options every client command takes, for its usage text.
inline constexpr char kOrchestratorOptionUsage[] =
    "  --orchestrator ENDPOINT  the orchestrator's client endpoint (default:\n"
    "                           $COHORT_ORCHESTRATOR, else tcp://127.0.0.1:29401)\n"
    "  --key FILE               this client's secret key file (`cohort keygen`), to speak\n"
    "                           CURVE to an orchestrator that requires it (default: $COHORT_KEY)\n"
    "  --orchestrator-key KEY   the orchestrator's public key: its .pub file or the 40\n"
    "                           characters of Z85 (default: $COHORT_ORCHESTRATOR_KEY)\n";

// How long a client command waits for each answer from the orchestrator.
inline constexpr double kClientRequestTimeoutSeconds = 10;

struct ClientCommandSpec {
  std::string command;                     // "cohort experiment describe", to name problems
  std::string usage;                       // printed by --help and after a usage problem
  std::vector<std::string> positionals;    // names of the required arguments, in order
  std::vector<std::string> value_options;  // options that take the next argument, e.g. "--set"
  std::vector<std::string> flags;          // options without a value, e.g. "--follow"
};

struct ClientArgs {
  std::string orchestrator;  // --orchestrator, else DefaultOrchestratorEndpoint()
  // From --key and --orchestrator-key, each defaulting to $COHORT_KEY and
  // $COHORT_ORCHESTRATOR_KEY; nullopt when neither is given (no CURVE).
  std::optional<CurveClientConfig> curve;
  std::vector<std::string> positionals;                    // as many as the spec names
  std::map<std::string, std::vector<std::string>> values;  // option -> every value given, in order
  std::set<std::string> flags;

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
  // The option's last value, if given.
  std::optional<std::string> Value(const std::string& option) const;
};

// $COHORT_ORCHESTRATOR when set and not empty, else tcp://127.0.0.1:29401.
std::string DefaultOrchestratorEndpoint();

// nullopt after printing the usage to stdout for --help/-h (*exit_code 0), after a usage
// problem (an unknown option, a missing value, a missing or extra argument, only one of the two
// keys) printed as "<command>: <problem>" and the usage to stderr (*exit_code 2), or after
// "error: <why>" when the keys cannot be loaded (*exit_code 1).
std::optional<ClientArgs> ParseClientArgs(const ClientCommandSpec& spec,
                                          const std::vector<std::string>& arguments,
                                          int* exit_code);

// Prints "<command>: <problem>" and the usage to stderr; returns 2.
int ClientUsageError(const ClientCommandSpec& spec, absl::string_view problem);

// Prints "error: <message>" to stderr; returns 1.
int ClientFailure(const absl::Status& status);

// A decimal id or count, or nullopt for anything else.
std::optional<uint64_t> ParseUnsigned(const std::string& text);

// The id (1, 2, ...) in `text`, which the command line gave as `name` ("TRIAL_ID", "--trial") of
// a `kind` ("trial", "experiment"); otherwise nullopt, after the usage error naming both
// (*exit_code 2).
std::optional<uint64_t> ParseId(const ClientCommandSpec& spec, const std::string& text,
                                absl::string_view name, absl::string_view kind, int* exit_code);

// A connection to the orchestrator named in `args`, a CURVE client when `args` holds keys (see
// OrchestratorClient::Connect).
absl::StatusOr<std::unique_ptr<OrchestratorClient>> ConnectToOrchestrator(const ClientArgs& args);

// One request to the orchestrator named in `args`, on a connection of its own, expecting a
// `Reply` within kClientRequestTimeoutSeconds (see OrchestratorClient::RequestReply).
template <typename Reply>
absl::StatusOr<Reply> AskOrchestrator(const ClientArgs& args, const ClientMessage& request) {
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client = ConnectToOrchestrator(args);
  if (!client.ok()) return client.status();
  return (*client)->RequestReply<Reply>(request, kClientRequestTimeoutSeconds);
}

// Asks the orchestrator named in `args` for a `Reply` to `request` (AskOrchestrator) and prints
// the text `format(reply)` returns to stdout; returns 0, or ClientFailure's 1 when asking fails.
template <typename Reply, typename Format>
int AskAndPrint(const ClientArgs& args, const ClientMessage& request, Format format) {
  const absl::StatusOr<Reply> reply = AskOrchestrator<Reply>(args, request);
  if (!reply.ok()) return ClientFailure(reply.status());
  const std::string text = format(*reply);
  std::fputs(text.c_str(), stdout);
  return 0;
}

using ClientSubcommand = std::function<int(const std::vector<std::string>& arguments)>;

// `cohort <group> <subcommand> ARGS`: runs the named subcommand with the rest of the arguments.
// Prints `usage` to stdout for --help (returns 0); to stderr, after naming the problem, for a
// missing or unknown subcommand (returns 2).
int RunClientSubcommand(absl::string_view group, absl::string_view usage,
                        const std::vector<std::pair<std::string, ClientSubcommand>>& subcommands,
                        const std::vector<std::string>& arguments);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_CLIENT_ARGS_H_
