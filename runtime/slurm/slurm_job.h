// What the Slurm resource manager says to Slurm and reads back, as pure functions: a task's job
// shape (nodes and slots per node), its sbatch arguments and batch script, and the parsing of
// sbatch's, squeue's and sinfo's answers. slurm_provisioner.h runs the commands.
//
// A task's agents run one per node, each named slurm-<job id>-<node index> (SLURM_NODEID), so the
// orchestrator tells which job an agent belongs to (SlurmJobOfAgent).
//
//   absl::StatusOr<uint32_t> nodes = SlurmNodesFor(16, settings.slots_per_node);  // 2 of 8
//   std::vector<std::string> argv = SbatchArgv(settings, request, *nodes);
//   std::string script = SlurmBatchScript(settings, request, *nodes);   // sbatch's stdin
#ifndef COHORT_RUNTIME_SLURM_SLURM_JOB_H_
#define COHORT_RUNTIME_SLURM_SLURM_JOB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/orchestrator/agent_provisioner.h"

namespace cohort {

// The name of the key the jobs' agents share under CURVE; also the prefix of their ids
// (slurm-<job id>-<node index>), so the orchestrator admits that key from them alone.
inline constexpr char kSlurmAgentKeyName[] = "slurm";

struct SlurmSettings {
  std::string partition;                    // sbatch --partition; "" for Slurm's default
  std::string account;                      // sbatch --account; "" for none
  std::vector<std::string> sbatch_options;  // added to every sbatch as they are
  // Slots an agent offers on one node: GPUs per node on a GPU partition, else CPUs per node (one
  // CPU slot per CPU).
  uint32_t slots_per_node = 0;
  bool gpus = false;  // slots are GPUs (sbatch --gpus-per-node; agents offer the node's GPUs)
  std::string orchestrator_endpoint;  // where agents connect, e.g. tcp://10.0.0.5:29400
  std::string cohort_executable;      // the cohort binary, at the same path on every node
  std::string log_dir;                // each job's output goes to <log_dir>/<job id>.out
  // CURVE for the agents: their secret key file (the key named `slurm`, on every node) and the
  // orchestrator's public key; both empty without CURVE.
  std::string agent_key_file;
  std::string orchestrator_public_key;
};

// Nodes for a task of `slots` slots: one when it fits a node, else slots / slots_per_node when
// that divides evenly (every node taken whole, as agents are under the orchestrator's own
// placement); INVALID_ARGUMENT saying why not, with the counts that would fit.
absl::StatusOr<uint32_t> SlurmNodesFor(uint32_t slots, uint32_t slots_per_node);

// sbatch's arguments for the task (the script comes on stdin): --parsable, the job name
// cohort-task-<task id>, the nodes, one task per node, the output file, the CPUs of each node's
// slots or its GPUs (whole nodes, --exclusive: an agent offers all its node's GPUs), the
// partition (the request's, else the settings'), account, sbatch_options, then the request's
// options.
std::vector<std::string> SbatchArgv(const SlurmSettings& settings, const ProvisionRequest& request,
                                    uint32_t nodes);

// The batch script: srun starts one `cohort agent` per node, named slurm-$SLURM_JOB_ID-
// $SLURM_NODEID, offering the node's share of the task's slots.
std::string SlurmBatchScript(const SlurmSettings& settings, const ProvisionRequest& request,
                             uint32_t nodes);

// The job id in `sbatch --parsable`'s output ("4711" or "4711;cluster"); INVALID_ARGUMENT
// quoting the output when there is none.
absl::StatusOr<std::string> ParseSbatchJobId(absl::string_view output);

// The states of `job_ids` from `squeue -h --states=all -o %i|%T|%r` output: PENDING (and the
// other states of a job still to run: CONFIGURING, SUSPENDED, REQUEUED...) is pending with
// squeue's reason ("Resources"; none for "None"); RUNNING is running; every other state
// (COMPLETING, COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, PREEMPTED, ...) is ended with the
// state as detail; a job squeue does not list is ended, "gone".
std::map<std::string, JobState> ParseSqueueStates(absl::string_view output,
                                                  const std::vector<std::string>& job_ids);

// Slots per node from `sinfo -h -o %c|%G` output (CPUs, and generic resources such as
// "gpu:8" or "gpu:a100:4(S:0-1)"): the smallest over the partition's node lines, of GPUs when
// `gpus`, else of CPUs. INVALID_ARGUMENT when no line gives any.
absl::StatusOr<uint32_t> ParseSinfoSlotsPerNode(absl::string_view output, bool gpus);

// The job of an agent named slurm-<job id>-<node index>; nullopt for any other id.
std::optional<std::string> SlurmJobOfAgent(absl::string_view agent_id);

// `word` quoted for sh: as it is when it holds only safe characters, else in single quotes.
std::string ShellQuote(absl::string_view word);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SLURM_SLURM_JOB_H_
