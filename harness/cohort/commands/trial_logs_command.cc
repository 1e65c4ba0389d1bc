// `cohort trial logs TRIAL_ID [--follow] [--rank R] [--tail N]`.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/commands/follow_patience.h"
#include "harness/cohort/format/cluster_format.h"
#include "runtime/base/clock.h"

namespace cohort {
namespace {

constexpr auto kLogPollInterval = std::chrono::milliseconds(500);

ClientCommandSpec LogsSpec() {
  return {
      "cohort trial logs",
      absl::StrCat("usage: cohort trial logs TRIAL_ID [--follow] [--rank R] [--tail N]\n"
                   "\n"
                   "Prints the trial's output lines, oldest first, as \"[rank R] text\" (its\n"
                   "workers' stderr too, on stdout), with the orchestrator's own lines about the\n"
                   "trial (\"[cohort] ...\": its tasks, each metrics report) among them. TRIAL_ID\n"
                   "is the TRIAL column of `cohort experiment describe`.\n"
                   "\n"
                   "  --follow                 keep printing new lines until the trial ends\n"
                   "  --rank R                 only rank R's lines (no [cohort] line)\n"
                   "  --tail N                 start with the last N lines only\n",
                   kOrchestratorOptionUsage),
      {"TRIAL_ID"},
      {"--rank", "--tail"},
      {"--follow"},
  };
}

struct LogsOptions {
  uint64_t trial_id = 0;
  int32_t rank = -1;
  std::optional<uint64_t> tail;
  bool follow = false;
};

// The options in `args`, or nullopt after printing a usage error into `*exit_code`.
std::optional<LogsOptions> ReadOptions(const ClientCommandSpec& spec, const ClientArgs& args,
                                       int* exit_code) {
  LogsOptions options;
  options.follow = args.Has("--follow");
  const std::optional<uint64_t> trial =
      ParseId(spec, args.positionals[0], "TRIAL_ID", "trial", exit_code);
  if (!trial) return std::nullopt;
  options.trial_id = *trial;
  if (const std::optional<std::string> rank = args.Value("--rank")) {
    const std::optional<uint64_t> parsed = ParseUnsigned(*rank);
    if (!parsed || *parsed > uint64_t{INT32_MAX}) {
      *exit_code = ClientUsageError(
          spec, absl::StrCat("--rank needs a rank (0, 1, ...), not '", *rank, "'"));
      return std::nullopt;
    }
    options.rank = static_cast<int32_t>(*parsed);
  }
  if (const std::optional<std::string> tail = args.Value("--tail")) {
    options.tail = ParseUnsigned(*tail);
    if (!options.tail) {
      *exit_code =
          ClientUsageError(spec, absl::StrCat("--tail needs a number of lines, not '", *tail, "'"));
      return std::nullopt;
    }
  }
  return options;
}

void Print(const TrialLogLine& line) { std::printf("%s\n", FormatLogLine(line).c_str()); }

int PrintLogs(OrchestratorClient& client, const LogsOptions& options) {
  TrialLogsRequest request{options.trial_id, options.rank, /*after_sequence=*/0,
                           /*max_lines=*/0};
  std::deque<TrialLogLine> held;  // the last --tail lines, until the history has been read
  bool caught_up = false;
  FollowPatience patience(stderr);
  while (true) {
    absl::StatusOr<TrialLogs> logs =
        client.RequestReply<TrialLogs>(request, kClientRequestTimeoutSeconds);
    if (!logs.ok()) {
      if (options.follow && patience.KeepTrying(logs.status(), SystemClock().MonotonicSeconds())) {
        std::this_thread::sleep_for(kLogPollInterval);
        continue;
      }
      return ClientFailure(logs.status());
    }
    patience.Answered(SystemClock().MonotonicSeconds());
    for (TrialLogLine& line : logs->lines) {
      request.after_sequence = std::max(request.after_sequence, line.sequence);
      if (caught_up || !options.tail) {
        Print(line);
        continue;
      }
      held.push_back(std::move(line));
      if (held.size() > *options.tail) held.pop_front();
    }
    if (!caught_up && (logs->lines.empty() || logs->trial_ended)) {
      caught_up = true;
      for (const TrialLogLine& line : held) Print(line);
      held.clear();
    }
    std::fflush(stdout);
    if (logs->trial_ended || (caught_up && !options.follow)) return 0;
    if (caught_up && logs->lines.empty()) std::this_thread::sleep_for(kLogPollInterval);
  }
}

}  // namespace

int RunTrialLogsCommand(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec = LogsSpec();
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const std::optional<LogsOptions> options = ReadOptions(spec, *args, &exit_code);
  if (!options) return exit_code;
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client = ConnectToOrchestrator(*args);
  if (!client.ok()) return ClientFailure(client.status());
  return PrintLogs(**client, *options);
}

}  // namespace cohort
