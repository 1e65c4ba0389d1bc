// The flags of `cohort orchestrator` that choose where tasks' agents come from: its own agents
// (`--resource-manager agents`, the default), or a Slurm job per task (`--resource-manager slurm`
// with the --slurm-* and --sbatch-option flags, runtime/slurm/slurm_provisioner.h).
//
//   ResourceManagerArgs rm;
//   absl::StatusOr<bool> took = TakeResourceManagerFlag(args, i, rm);  // in the flag loop
//   ...
//   absl::StatusOr<std::unique_ptr<SlurmProvisioner>> slurm = StartSlurm(rm, state_dir, keys);
#ifndef COHORT_HARNESS_COHORT_COMMANDS_RESOURCE_MANAGER_FLAGS_H_
#define COHORT_HARNESS_COHORT_COMMANDS_RESOURCE_MANAGER_FLAGS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/security/curve_keys.h"
#include "runtime/slurm/slurm_provisioner.h"

namespace cohort {

struct ResourceManagerArgs {
  std::string resource_manager = "agents";  // agents | slurm
  std::string partition;
  std::string account;
  std::vector<std::string> sbatch_options;
  std::string slots_per_node;  // "" asks sinfo; CheckResourceManagerArgs checks it
  bool gpus = false;
  std::string agent_key_file;  // --slurm-agent-key
};

// When args[*i] is one of these flags, takes it (and its value, advancing *i) into *out: true.
// False for any other argument; INVALID_ARGUMENT for a flag without its value or a bad value.
absl::StatusOr<bool> TakeResourceManagerFlag(const std::vector<std::string>& args, size_t* i,
                                             ResourceManagerArgs* out);

// INVALID_ARGUMENT naming the flag when --slurm-* flags come without --resource-manager slurm.
absl::Status CheckResourceManagerArgs(const ResourceManagerArgs& args);

// The Slurm provisioner for --resource-manager slurm (`args` passed CheckResourceManagerArgs);
// null for agents. Its jobs' output goes to <state_dir>/slurm-jobs/; its agents connect to
// `listen` (a fixed TCP port; a wildcard host becomes this machine's host name), over CURVE with
// --slurm-agent-key and the orchestrator's public key when `agents_use_curve`. INVALID_ARGUMENT
// names the flag; other errors say what Slurm could not answer.
absl::StatusOr<std::unique_ptr<SlurmProvisioner>> StartSlurm(
    const ResourceManagerArgs& args, const std::string& state_dir, const std::string& listen,
    bool agents_use_curve, const std::optional<CurveKeyPair>& server_keys);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_RESOURCE_MANAGER_FLAGS_H_
