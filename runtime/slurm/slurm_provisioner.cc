#include "runtime/slurm/slurm_provisioner.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

constexpr double kCommandTimeoutSeconds = 60;

}  // namespace

absl::StatusOr<std::unique_ptr<SlurmProvisioner>> SlurmProvisioner::Create(SlurmSettings settings,
                                                                           CommandRunner run) {
  if (!run) {
    run = [](const std::vector<std::string>& argv, const std::string& input) {
      return RunCommand(argv, input, kCommandTimeoutSeconds);
    };
  }
  std::error_code error;
  std::filesystem::create_directories(settings.log_dir, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", settings.log_dir, ": ", error.message()));
  }
  std::unique_ptr<SlurmProvisioner> provisioner(
      new SlurmProvisioner(std::move(settings), std::move(run)));
  SlurmSettings& own = provisioner->settings_;
  if (own.slots_per_node == 0) {
    std::vector<std::string> sinfo = {"sinfo", "-h", "-o", "%c|%G"};
    if (!own.partition.empty()) sinfo.push_back("--partition=" + own.partition);
    absl::StatusOr<std::string> listed = provisioner->Run(sinfo);
    if (!listed.ok()) {
      return absl::Status(
          listed.status().code(),
          absl::StrCat("cannot ask Slurm for the slots of a node (or give them with "
                       "--slurm-slots-per-node): ",
                       listed.status().message()));
    }
    absl::StatusOr<uint32_t> slots = ParseSinfoSlotsPerNode(*listed, own.gpus);
    if (!slots.ok()) return slots.status();
    own.slots_per_node = *slots;
  }
  return provisioner;
}

absl::Status SlurmProvisioner::CheckCanEverFit(uint32_t slots) const {
  return SlurmNodesFor(slots, settings_.slots_per_node).status();
}

absl::StatusOr<ProvisionedJob> SlurmProvisioner::Submit(const ProvisionRequest& request) {
  absl::StatusOr<uint32_t> nodes = SlurmNodesFor(request.slots, settings_.slots_per_node);
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<std::string> printed =
      Run(SbatchArgv(settings_, request, *nodes), SlurmBatchScript(settings_, request, *nodes));
  if (!printed.ok()) return printed.status();
  absl::StatusOr<std::string> id = ParseSbatchJobId(*printed);
  if (!id.ok()) return id.status();
  return ProvisionedJob{*std::move(id), *nodes};
}

absl::StatusOr<std::map<std::string, JobState>> SlurmProvisioner::States(
    const std::vector<std::string>& job_ids) {
  // Every job of this user, ended ones included, filtered here: `squeue --jobs` fails as a whole
  // for an id Slurm has already forgotten.
  absl::StatusOr<std::string> listed =
      Run({"squeue", "-h", "--me", "--states=all", "-o", "%i|%T|%r"});
  if (!listed.ok()) return listed.status();
  return ParseSqueueStates(*listed, job_ids);
}

absl::Status SlurmProvisioner::Cancel(const std::string& job_id) {
  absl::StatusOr<std::string> cancelled = Run({"scancel", job_id});
  if (cancelled.ok() || absl::StrContains(cancelled.status().message(), "already completing") ||
      absl::StrContains(cancelled.status().message(), "Invalid job id")) {
    return absl::OkStatus();
  }
  return cancelled.status();
}

std::optional<std::string> SlurmProvisioner::JobOfAgent(absl::string_view agent_id) const {
  return SlurmJobOfAgent(agent_id);
}

absl::StatusOr<std::string> SlurmProvisioner::Run(const std::vector<std::string>& argv,
                                                  const std::string& input) {
  absl::StatusOr<CommandOutput> out = run_(argv, input);
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    return absl::UnavailableError(
        absl::StrCat(absl::StrJoin(argv, " "), " exited ", out->exit_code, ": ",
                     absl::StripAsciiWhitespace(out->stderr_text.empty() ? out->stdout_text
                                                                         : out->stderr_text)));
  }
  return std::move(out->stdout_text);
}

}  // namespace cohort
