#include "harness/cohort/commands/client_args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/command_exit.h"
#include "runtime/client/orchestrator_client.h"
#include "runtime/control/endpoint_text.h"
#include "runtime/text/closest_name.h"

namespace cohort {
namespace {

// The options ParseClientArgs handles itself, each with the environment variable it defaults to.
constexpr char kKeyOption[] = "--key";
constexpr char kOrchestratorKeyOption[] = "--orchestrator-key";

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What a Determined user's `det GROUP VERB` is called here, for the verbs Cohort names otherwise;
// null for the others.
const char* DeterminedVerb(absl::string_view group, absl::string_view verb) {
  struct Renamed {
    const char* group;
    const char* verb;
    const char* here;
  };
  static constexpr Renamed kRenamed[] = {
      {"experiment", "create",
       "`det experiment create` is `cohort submit CONFIG` here (`cohort run CONFIG` trains on "
       "this machine alone)"},
      {"experiment", "cancel", "`det experiment cancel` is `cohort experiment kill ID` here"},
      {"experiment", "list-checkpoints",
       "`det experiment list-checkpoints` is `cohort checkpoint list ID` here"},
      {"checkpoint", "download",
       "`det checkpoint download` is `cohort checkpoint export CHECKPOINT_ID DIR` here"},
  };
  for (const Renamed& renamed : kRenamed) {
    if (group == renamed.group && verb == renamed.verb) return renamed.here;
  }
  return nullptr;
}

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

std::optional<std::string> ClientArgs::Value(const std::string& option) const {
  const auto found = values.find(option);
  if (found == values.end() || found->second.empty()) return std::nullopt;
  return found->second.back();
}

std::string DefaultOrchestratorEndpoint() {
  const char* from_environment = std::getenv("COHORT_ORCHESTRATOR");
  if (from_environment != nullptr && from_environment[0] != '\0') return from_environment;
  return kDefaultOrchestratorClientEndpoint;
}

int ClientUsageError(const ClientCommandSpec& spec, absl::string_view problem) {
  return UsageError(spec.command, problem, spec.usage);
}

int ClientFailure(const absl::Status& status) { return CommandError(status); }

std::optional<uint64_t> ParseUnsigned(const std::string& text) {
  uint64_t value = 0;
  if (text.empty() || text[0] == '-' || text[0] == '+' || !absl::SimpleAtoi(text, &value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<uint64_t> ParseId(const ClientCommandSpec& spec, const std::string& text,
                                absl::string_view name, absl::string_view kind, int* exit_code) {
  const std::optional<uint64_t> id = ParseUnsigned(text);
  if (id && *id > 0) return id;
  const absl::string_view article = absl::StartsWith(kind, "e") ? "an" : "a";
  *exit_code = ClientUsageError(spec, absl::StrCat(name, " must be ", article, " ", kind,
                                                   " id (1, 2, ...), not '", text, "'"));
  return std::nullopt;
}

std::optional<ClientArgs> ParseClientArgs(const ClientCommandSpec& spec,
                                          const std::vector<std::string>& arguments,
                                          int* exit_code) {
  ClientArgs parsed;
  parsed.orchestrator = DefaultOrchestratorEndpoint();
  bool explicit_orchestrator = false;  // else $COHORT_ORCHESTRATOR's, or the default
  std::string key_file = Environment("COHORT_KEY");
  std::string orchestrator_key = Environment("COHORT_ORCHESTRATOR_KEY");
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (argument == "--help" || argument == "-h") {
      std::fputs(spec.usage.c_str(), stdout);
      *exit_code = 0;
      return std::nullopt;
    }
    if (argument == "--orchestrator" || argument == kKeyOption ||
        argument == kOrchestratorKeyOption || Contains(spec.value_options, argument)) {
      if (i + 1 == arguments.size()) {
        *exit_code = ClientUsageError(spec, absl::StrCat(argument, " needs a value"));
        return std::nullopt;
      }
      const std::string& value = arguments[++i];
      if (argument == "--orchestrator") {
        parsed.orchestrator = value;
        explicit_orchestrator = true;
      } else if (argument == kKeyOption) {
        key_file = value;
      } else if (argument == kOrchestratorKeyOption) {
        orchestrator_key = value;
      } else {
        parsed.values[argument].push_back(value);
      }
    } else if (Contains(spec.flags, argument)) {
      parsed.flags.insert(argument);
    } else if (argument.size() > 1 && argument[0] == '-') {
      *exit_code = ClientUsageError(spec, absl::StrCat("unknown option '", argument, "'"));
      return std::nullopt;
    } else if (parsed.positionals.size() < spec.positionals.size()) {
      parsed.positionals.push_back(argument);
    } else {
      *exit_code = ClientUsageError(spec, absl::StrCat("unexpected argument '", argument, "'"));
      return std::nullopt;
    }
  }
  if (parsed.positionals.size() < spec.positionals.size()) {
    const std::string& missing = spec.positionals[parsed.positionals.size()];
    *exit_code = ClientUsageError(spec, absl::StrCat("missing ", missing));
    return std::nullopt;
  }
  if (parsed.orchestrator.empty()) {
    *exit_code = ClientUsageError(spec, "--orchestrator needs an endpoint");
    return std::nullopt;
  }
  if (absl::Status text = CheckEndpointText(
          explicit_orchestrator ? "--orchestrator" : "$COHORT_ORCHESTRATOR", parsed.orchestrator);
      !text.ok()) {
    *exit_code = ClientUsageError(spec, text.message());
    return std::nullopt;
  }
  if (key_file.empty() != orchestrator_key.empty()) {
    *exit_code = ClientUsageError(
        spec, key_file.empty()
                  ? "--orchestrator-key (or $COHORT_ORCHESTRATOR_KEY) needs --key (or $COHORT_KEY)"
                  : "--key (or $COHORT_KEY) needs --orchestrator-key (or "
                    "$COHORT_ORCHESTRATOR_KEY)");
    return std::nullopt;
  }
  absl::StatusOr<std::optional<CurveClientConfig>> curve =
      LoadCurveClientConfig(key_file, orchestrator_key);
  if (!curve.ok()) {
    *exit_code = ClientFailure(curve.status());
    return std::nullopt;
  }
  parsed.curve = *std::move(curve);
  return parsed;
}

absl::StatusOr<std::unique_ptr<OrchestratorClient>> ConnectToOrchestrator(const ClientArgs& args) {
  return OrchestratorClient::Connect(args.orchestrator, args.curve);
}

int RunClientSubcommand(absl::string_view group, absl::string_view usage,
                        const std::vector<std::pair<std::string, ClientSubcommand>>& subcommands,
                        const std::vector<std::string>& arguments) {
  if (!arguments.empty() && (arguments[0] == "--help" || arguments[0] == "-h")) {
    std::fwrite(usage.data(), 1, usage.size(), stdout);
    return 0;
  }
  std::string problem = arguments.empty() ? "missing a subcommand"
                                          : absl::StrCat("unknown subcommand '", arguments[0], "'");
  std::vector<absl::string_view> names;
  for (const auto& [name, run] : subcommands) {
    // `ls` is list, as in Determined's CLI.
    if (!arguments.empty() && (arguments[0] == name || (arguments[0] == "ls" && name == "list"))) {
      return run({arguments.begin() + 1, arguments.end()});
    }
    names.push_back(name);
  }
  if (!arguments.empty()) {
    if (const char* here = DeterminedVerb(group, arguments[0])) {
      absl::StrAppend(&problem, "; ", here);
    } else if (const std::optional<std::string> near = ClosestName(arguments[0], names)) {
      absl::StrAppend(&problem, "; did you mean '", *near, "'?");
    }
  }
  std::fprintf(stderr, "cohort %.*s: %s\n\n%.*s", static_cast<int>(group.size()), group.data(),
               problem.c_str(), static_cast<int>(usage.size()), usage.data());
  return 2;
}

}  // namespace cohort
