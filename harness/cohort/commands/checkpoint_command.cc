// `cohort checkpoint list EXPERIMENT_ID [--trial TRIAL_ID] [--best N] [--json]` and
// `cohort checkpoint export CHECKPOINT_ID DIR`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "harness/cohort/commands/client_args.h"
#include "harness/cohort/commands/client_commands.h"
#include "harness/cohort/format/experiment_json.h"
#include "harness/cohort/format/trial_format.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/shared_fs_storage.h"

namespace cohort {
namespace {

constexpr char kCheckpointUsage[] =
    "usage: cohort checkpoint SUBCOMMAND [ARGS]\n"
    "\n"
    "  list EXPERIMENT_ID       the checkpoints an experiment keeps (--trial: one trial's;\n"
    "                           --best N: the N validated best)\n"
    "  export CHECKPOINT_ID DIR copy a checkpoint, every byte verified, into DIR\n"
    "\n"
    "`cohort checkpoint SUBCOMMAND --help` explains its options.\n";

constexpr char kListUsage[] =
    "usage: cohort checkpoint list EXPERIMENT_ID [--trial TRIAL_ID] [--best N] [--json]\n"
    "\n"
    "Lists the checkpoints kept in storage for an experiment's trials (those that\n"
    "checkpoint_storage's save_* settings keep), oldest first per trial: the\n"
    "searcher metric validated at the same batch, the size, the state (whole,\n"
    "damaged or missing, as the orchestrator finds it in storage: a resume passes\n"
    "over the damaged and missing ones, each named under the table with what is\n"
    "wrong) and the folder as the orchestrator's host sees it.\n"
    "\n"
    "  --trial TRIAL_ID         only this trial's checkpoints\n"
    "  --best N                 only the N with the best searcher metric, best first (as\n"
    "                           Determined's `det experiment list-checkpoints --best N`)\n"
    "  --json                   print an array of one JSON object per checkpoint\n";

constexpr char kExportUsage[] =
    "usage: cohort checkpoint export CHECKPOINT_ID DIR\n"
    "\n"
    "Copies checkpoint CHECKPOINT_ID (as `cohort checkpoint list` names it, e.g.\n"
    "trial-7-batch-1200) into DIR/CHECKPOINT_ID: every file is checked against the\n"
    "checkpoint's manifest as it is copied, a few MiB at a time, and the copy appears\n"
    "whole or not at all (DIR is a checkpoint storage folder of its own then, with the\n"
    "same manifest). The checkpoint's folder must be readable from this host\n"
    "(shared_fs storage, as Determined's `det checkpoint download` reads it). An\n"
    "existing copy is refused.\n"
    "\n";

int List(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort checkpoint list",
                               absl::StrCat(kListUsage, kOrchestratorOptionUsage),
                               {"EXPERIMENT_ID"},
                               {"--trial", "--best"},
                               {"--json"}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  ListCheckpoints request;
  const std::optional<uint64_t> experiment =
      ParseId(spec, args->positionals[0], "EXPERIMENT_ID", "experiment", &exit_code);
  if (!experiment) return exit_code;
  request.experiment_id = *experiment;
  if (const std::optional<std::string> trial = args->Value("--trial")) {
    const std::optional<uint64_t> id = ParseId(spec, *trial, "--trial", "trial", &exit_code);
    if (!id) return exit_code;
    request.trial_id = *id;
  }
  std::optional<uint64_t> best;
  if (const std::optional<std::string> count = args->Value("--best")) {
    best = ParseUnsigned(*count);
    if (!best || *best == 0) {
      return ClientUsageError(spec, absl::StrCat("--best needs a count >= 1, not '", *count, "'"));
    }
  }
  absl::StatusOr<std::unique_ptr<OrchestratorClient>> client = ConnectToOrchestrator(*args);
  if (!client.ok()) return ClientFailure(client.status());
  absl::StatusOr<CheckpointListing> listing =
      (*client)->RequestReply<CheckpointListing>(request, kClientRequestTimeoutSeconds);
  if (!listing.ok()) return ClientFailure(listing.status());
  if (best) {
    // Which way the searcher metric is better is the experiment's.
    absl::StatusOr<ExperimentDescription> experiment =
        (*client)->RequestReply<ExperimentDescription>(DescribeExperiment{request.experiment_id},
                                                       kClientRequestTimeoutSeconds);
    if (!experiment.ok()) return ClientFailure(experiment.status());
    *listing = BestCheckpoints(*listing, experiment->smaller_is_better, *best);
  }
  const std::string text = args->Has("--json") ? CheckpointListingJson(*listing) + "\n"
                                               : FormatCheckpointListing(*listing);
  std::fputs(text.c_str(), stdout);
  return 0;
}

// `path` absolute, without "." or ".." or a trailing '/'.
std::filesystem::path Normal(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::path normal = std::filesystem::absolute(path, error).lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

// The outermost folder of `path` (itself included) that does not exist yet, or nullopt.
std::optional<std::filesystem::path> FirstMissingFolder(const std::filesystem::path& path) {
  std::optional<std::filesystem::path> missing;
  std::error_code error;
  for (std::filesystem::path at = Normal(path); !at.empty() && !std::filesystem::exists(at, error);
       at = at.parent_path()) {
    missing = at;
    if (at == at.parent_path()) break;
  }
  return missing;
}

// Copies the checkpoint in folder `source` into the storage at `destination`, whole or not at
// all, every byte verified on the way; the copy's folder. A copy that fails leaves no folder it
// made behind.
absl::StatusOr<std::string> CopyCheckpoint(const std::filesystem::path& source,
                                           const std::string& destination) {
  const std::string id = source.filename().string();
  const std::filesystem::path copy = std::filesystem::path(destination) / id;
  std::error_code error;
  if (std::filesystem::exists(copy, error)) {
    return absl::AlreadyExistsError(absl::StrCat(copy.string(), " already exists; not replaced"));
  }
  const std::optional<std::filesystem::path> made = FirstMissingFolder(destination);
  if (absl::Status copied = CopySharedFsCheckpoint(source.parent_path().string(), id, destination);
      !copied.ok()) {
    // Only folders left empty go (remove refuses the others).
    if (made) {
      for (std::filesystem::path at = Normal(destination);
           at.string().size() >= made->string().size(); at = at.parent_path()) {
        if (!std::filesystem::remove(at, error)) break;
      }
    }
    if (copied.code() == absl::StatusCode::kDataLoss) {
      return absl::DataLossError(
          absl::StrCat(copied.message(),
                       ": the checkpoint is damaged; export another of the trial's "
                       "(`cohort checkpoint list EXPERIMENT_ID --trial TRIAL_ID` names them)"));
    }
    return copied;
  }
  return copy.string();
}

int Export(const std::vector<std::string>& arguments) {
  const ClientCommandSpec spec{"cohort checkpoint export",
                               absl::StrCat(kExportUsage, kOrchestratorOptionUsage),
                               {"CHECKPOINT_ID", "DIR"},
                               {},
                               {}};
  int exit_code = 0;
  std::optional<ClientArgs> args = ParseClientArgs(spec, arguments, &exit_code);
  if (!args) return exit_code;
  const std::string& id = args->positionals[0];
  const std::optional<CheckpointIdParts> parts = ParseCheckpointId(id);
  if (!parts) {
    return ClientUsageError(
        spec, absl::StrCat("CHECKPOINT_ID must name a checkpoint as `cohort checkpoint list` "
                           "does (trial-7-batch-1200), not '",
                           id, "'"));
  }
  const absl::StatusOr<CheckpointListing> listing =
      AskOrchestrator<CheckpointListing>(*args, ListCheckpoints{0, parts->trial_id});
  if (!listing.ok()) return ClientFailure(listing.status());
  for (const CheckpointRow& row : listing->checkpoints) {
    if (row.checkpoint_id != id) continue;
    const absl::StatusOr<std::string> copy = CopyCheckpoint(row.path, args->positionals[1]);
    if (!copy.ok()) {
      return ClientFailure(absl::Status(
          copy.status().code(),
          absl::StrCat("checkpoint ", id, " (", row.path, "): ", copy.status().message())));
    }
    std::printf("checkpoint %s: exported to %s (%s)\n", id.c_str(), copy->c_str(),
                FormatBytes(row.bytes).c_str());
    return 0;
  }
  return ClientFailure(absl::NotFoundError(absl::StrCat(
      "trial ", parts->trial_id, " keeps no checkpoint ", id, " (`cohort checkpoint list --trial ",
      parts->trial_id, "` lists those it keeps)")));
}

}  // namespace

int RunCheckpointCommand(const std::vector<std::string>& arguments) {
  return RunClientSubcommand("checkpoint", kCheckpointUsage, {{"list", List}, {"export", Export}},
                             arguments);
}

}  // namespace cohort
