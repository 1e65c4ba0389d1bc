// `cohort submit`: validates an experiment config here, then hands it to the orchestrator.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/commands/follow_patience.h"
#include "harness/cohort/format/experiment_changes.h"
#include "harness/cohort/process/entrypoint.h"
#include "harness/cohort/run/run_setup.h"
#include "runtime/base/clock.h"
#include "runtime/client/orchestrator_client.h"
#include "runtime/config/experiment_config.h"
#include "runtime/config/yaml_quoting.h"

namespace cohort {
namespace {

constexpr auto kFollowInterval = std::chrono::seconds(1);

ClientCommandSpec SubmitSpec() {
  return {
      "cohort submit",
      absl::StrCat(
          "usage: cohort submit EXPERIMENT.yaml [--set KEY=VALUE]... [--follow]\n"
          "\n"
          "Validates the experiment config here (an error names the field), resolves its\n"
          "entrypoint to the plugin's absolute path (the agents' hosts must see the plugin at\n"
          "that path) and submits the experiment to the orchestrator.\n"
          "\n"
          "  --set KEY=VALUE          override a config value by its dotted path, e.g.\n"
          "                           --set hyperparameters.learning_rate=0.05\n"
          "  --follow                 then print each trial's state changes, its latest\n"
          "                           training metrics and every validation until the\n"
          "                           experiment ends\n",
          kOrchestratorOptionUsage,
          "\n"
          "Exit status: 0 submitted (with --follow: completed), 1 error, 2 bad usage, 130 (with\n"
          "--follow) the experiment stopped; Ctrl-C stops following it (it goes on), and the\n"
          "command then ends by that signal.\n"),
      {"EXPERIMENT.yaml"},
      {"--set"},
      {"--follow"},
  };
}

// The config as the orchestrator should get it: validated, with its name written out and its
// entrypoint replaced by the plugin's absolute path.
absl::StatusOr<std::string> SubmittableConfig(const std::string& path,
                                              std::vector<std::string> overrides) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(path, overrides);
  if (!config.ok()) return config.status();
  if (absl::Status checked =
          CheckAsLoaderTells(path, *config, overrides, overrides.size(), CheckSubmission);
      !checked.ok()) {
    return checked;
  }
  absl::StatusOr<std::string> plugin = ResolveEntrypoint(config->entrypoint, config->config_dir);
  if (!plugin.ok()) return plugin.status();
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(*plugin, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("entrypoint: cannot make '", *plugin, "' absolute: ", error.message()));
  }
  overrides.push_back(
      absl::StrCat("entrypoint=", QuotedYamlScalar(absolute.lexically_normal().string())));
  overrides.push_back(absl::StrCat("name=", QuotedYamlScalar(config->name)));
  absl::StatusOr<ExperimentConfig> resolved = LoadExperimentConfig(path, overrides);
  if (!resolved.ok()) return resolved.status();
  return resolved->effective_yaml;
}

// What Ctrl-C during --follow says: the experiment is the orchestrator's, and goes on.
char follow_interrupted[160];

// Says so, then dies of the signal as it would have, so a shell stops a loop of commands too.
void SayFollowingStopped(int signal) {
  const ssize_t written =
      ::write(STDERR_FILENO, follow_interrupted, std::strlen(follow_interrupted));
  (void)written;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// SayFollowingStopped takes SIGINT and SIGTERM while it lives.
struct FollowSignals {
  FollowSignals() {
    std::signal(SIGINT, SayFollowingStopped);
    std::signal(SIGTERM, SayFollowingStopped);
  }
  ~FollowSignals() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
};

// Prints the experiment's changes every second until it ends; returns the exit status. Ctrl-C
// (or SIGTERM) stops following, saying the experiment goes on.
int Follow(OrchestratorClient& client, uint64_t experiment_id) {
  std::snprintf(follow_interrupted, sizeof follow_interrupted,
                "\nstopped following experiment %llu; it goes on in the orchestrator (`cohort "
                "experiment kill %llu` stops it)\n",
                static_cast<unsigned long long>(experiment_id),
                static_cast<unsigned long long>(experiment_id));
  const FollowSignals signals;
  // A trial that validated more than once since the last look is asked for the others.
  const TrialValidations validations = [&client](uint64_t trial_id) {
    absl::StatusOr<TrialDescription> trial = client.RequestReply<TrialDescription>(
        DescribeTrial{trial_id}, kClientRequestTimeoutSeconds);
    return trial.ok() ? trial->validations : std::vector<ValidationRow>{};
  };
  std::optional<ExperimentDescription> last;
  FollowPatience patience(stderr);
  patience.Answered(SystemClock().MonotonicSeconds());  // the submission was
  while (true) {
    absl::StatusOr<ExperimentDescription> now = client.RequestReply<ExperimentDescription>(
        DescribeExperiment{experiment_id}, kClientRequestTimeoutSeconds);
    if (!now.ok()) {
      if (patience.KeepTrying(now.status(), SystemClock().MonotonicSeconds())) {
        std::this_thread::sleep_for(kFollowInterval);
        continue;
      }
      return ClientFailure(now.status());
    }
    patience.Answered(SystemClock().MonotonicSeconds());
    for (const std::string& line : ExperimentChanges(last ? &*last : nullptr, *now, validations)) {
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
    if (ExperimentEnded(now->summary.state)) return ExitStatusForEnded(now->summary.state);
    last = *std::move(now);
    std::this_thread::sleep_for(kFollowInterval);
  }
}

}  // namespace

int RunSubmitCommand(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec = SubmitSpec();
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;

  const auto overrides = args->values.find("--set");
  absl::StatusOr<std::string> config_yaml = SubmittableConfig(
      args->positionals[0],
      overrides == args->values.end() ? std::vector<std::string>() : overrides->second);
  if (!config_yaml.ok()) return ClientFailure(config_yaml.status());

  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client = ConnectToOrchestrator(*args);
  if (!client.ok()) return ClientFailure(client.status());
  absl::StatusOr<ExperimentSubmitted> submitted = (*client)->RequestReply<ExperimentSubmitted>(
      SubmitExperiment{*std::move(config_yaml)}, kClientRequestTimeoutSeconds);
  if (!submitted.ok()) return ClientFailure(submitted.status());
  for (const std::string& warning : submitted->warnings) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  std::printf("experiment %llu submitted\n",
              static_cast<unsigned long long>(submitted->experiment_id));
  std::fflush(stdout);
  if (!args->Has("--follow")) return 0;
  return Follow(**client, submitted->experiment_id);
}

}  // namespace cohort
