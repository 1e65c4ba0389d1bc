#include "harness/cohort/commands/resource_manager_flags.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/process/this_process.h"
#include "runtime/agent/rendezvous_endpoint.h"

namespace cohort {

absl::StatusOr<bool> TakeResourceManagerFlag(const std::vector<std::string>& args, size_t* i,
                                             ResourceManagerArgs* out) {
  std::string arg = args[*i];
  std::optional<std::string> inline_value;
  if (const size_t equals = arg.find('='); absl::StartsWith(arg, "--") && equals != arg.npos) {
    inline_value = arg.substr(equals + 1);
    arg = arg.substr(0, equals);
  }
  if (arg == "--slurm-gpus" && !inline_value) {
    out->gpus = true;
    return true;
  }
  std::string* value = arg == "--resource-manager"       ? &out->resource_manager
                       : arg == "--slurm-partition"      ? &out->partition
                       : arg == "--slurm-account"        ? &out->account
                       : arg == "--slurm-slots-per-node" ? &out->slots_per_node
                       : arg == "--slurm-agent-key"      ? &out->agent_key_file
                       : arg == "--sbatch-option"        ? &out->sbatch_options.emplace_back()
                                                         : nullptr;
  if (value == nullptr) return false;
  if (inline_value) {
    *value = *inline_value;
  } else if (*i + 1 < args.size()) {
    *value = args[++*i];
  } else {
    return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
  }
  if (value->empty()) return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
  return true;
}

absl::Status CheckResourceManagerArgs(const ResourceManagerArgs& args) {
  if (args.resource_manager != "agents" && args.resource_manager != "slurm") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resource-manager needs agents or slurm, not '", args.resource_manager, "'"));
  }
  if (args.resource_manager == "slurm") {
    uint32_t slots = 0;
    if (!args.slots_per_node.empty() &&
        (!absl::SimpleAtoi(args.slots_per_node, &slots) || slots == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slurm-slots-per-node needs a count of slots > 0, not '", args.slots_per_node, "'"));
    }
    return absl::OkStatus();
  }
  const char* given = !args.partition.empty()        ? "--slurm-partition"
                      : !args.account.empty()        ? "--slurm-account"
                      : !args.sbatch_options.empty() ? "--sbatch-option"
                      : !args.slots_per_node.empty() ? "--slurm-slots-per-node"
                      : args.gpus                    ? "--slurm-gpus"
                      : !args.agent_key_file.empty() ? "--slurm-agent-key"
                                                     : nullptr;
  if (given != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(given, " needs --resource-manager slurm"));
  }
  return absl::OkStatus();
}

namespace {

// `listen` as an agent on another node reaches it: a wildcard host becomes this machine's name.
absl::StatusOr<std::string> AgentEndpointFor(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (!absl::StartsWith(listen, "tcp://") || colon < 6) {
    return absl::InvalidArgumentError(
        absl::StrCat("--resource-manager slurm needs a TCP --listen endpoint, not '", listen, "'"));
  }
  if (const std::string port = listen.substr(colon + 1); port == "*" || port == "0") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resource-manager slurm needs a fixed --listen port (the jobs' agents are told it), "
        "not '",
        listen, "'"));
  }
  return ReachableRendezvousEndpoint(listen, absl::StrCat("tcp://", HostName(), ":0"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlurmProvisioner>> StartSlurm(
    const ResourceManagerArgs& args, const std::string& state_dir, const std::string& listen,
    bool agents_use_curve, const std::optional<CurveKeyPair>& server_keys) {
  if (args.resource_manager != "slurm") return nullptr;
  SlurmSettings settings;
  settings.partition = args.partition;
  settings.account = args.account;
  settings.sbatch_options = args.sbatch_options;
  settings.gpus = args.gpus;
  if (!args.slots_per_node.empty()) {
    (void)absl::SimpleAtoi(args.slots_per_node, &settings.slots_per_node);  // checked before
  }
  absl::StatusOr<std::string> endpoint = AgentEndpointFor(listen);
  if (!endpoint.ok()) return endpoint.status();
  settings.orchestrator_endpoint = *std::move(endpoint);
  absl::StatusOr<std::string> cohort = SelfExecutable();
  if (!cohort.ok()) return cohort.status();
  settings.cohort_executable = *std::move(cohort);
  settings.log_dir = state_dir + "/slurm-jobs";
  if (agents_use_curve) {
    if (args.agent_key_file.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--listen ", listen,
                       " uses CURVE: give --slurm-agent-key, the key the Slurm jobs' "
                       "agents share (`cohort keygen --name ",
                       kSlurmAgentKeyName, "`, its public key authorized under the name ",
                       kSlurmAgentKeyName, ")"));
    }
    if (!server_keys) {
      return absl::InvalidArgumentError(
          "--slurm-agent-key needs --key (the agents are told the orchestrator's public key)");
    }
    settings.agent_key_file = AbsolutePath(args.agent_key_file);
    settings.orchestrator_public_key = server_keys->public_key;
  }
  return SlurmProvisioner::Create(std::move(settings));
}

}  // namespace cohort
