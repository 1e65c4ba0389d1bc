// AgentProvisioner: where a task's agents come from when the cluster keeps none standing, as under
// `cohort orchestrator --resource-manager slurm` (runtime/slurm/slurm_provisioner.h).
//
// For each task it is to place, the orchestrator asks for a job (Submit). The job starts agents
// that connect and register as usual, under ids JobOfAgent recognizes as the job's; the task is
// placed on those agents alone, once all of them have registered. The orchestrator follows its
// jobs' states while their tasks wait (States: a pending job's reason goes in the task's waiting
// reason) and cancels a job once its task has ended, was killed while queued, or is dropped
// (Cancel). An agent of a job that serves no task is refused at registration.
//
// The seam lets tests stand a scripted batch system in for Slurm. Thread-safety: Submit, States
// and Cancel are called one at a time, from a thread of their own (ProvisionerCalls); the const
// methods from the Orchestrator's thread meanwhile, so they must not read what those three change.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_AGENT_PROVISIONER_H_
#define COHORT_RUNTIME_ORCHESTRATOR_AGENT_PROVISIONER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

struct ProvisionRequest {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
  uint64_t experiment_id = 0;
  uint32_t slots = 0;  // slots_per_trial, passed CheckCanEverFit
  // The experiment's own choices (resources.resource_pool, slurm.sbatch_args): a partition
  // instead of the provisioner's ("" for its own), and options after the provisioner's.
  std::string partition{};
  std::vector<std::string> options{};
};

struct ProvisionedJob {
  std::string id;       // the batch system's job id, e.g. "4711"
  uint32_t agents = 0;  // agents the job starts, one per node, the slots split evenly among them
};

struct JobState {
  enum class Phase { kPending, kRunning, kEnded };
  Phase phase = Phase::kPending;
  // Pending: the batch system's reason, e.g. "Resources" or "Priority"; ended: how, e.g.
  // "CANCELLED", or "gone" for a job the batch system no longer lists.
  std::string detail;

  friend bool operator==(const JobState&, const JobState&) = default;
};

class AgentProvisioner {
 public:
  virtual ~AgentProvisioner() = default;

  // The batch system's name as users know it ("Slurm"), for waiting reasons and notices.
  virtual std::string name() const = 0;

  // At submission: OK when a task of `slots` slots can ever get a job; otherwise
  // INVALID_ARGUMENT saying why, e.g. "nodes have 8 slots each and 12 is not a multiple of 8".
  virtual absl::Status CheckCanEverFit(uint32_t slots) const = 0;

  // Asks the batch system for a job running the agents of `request`'s task. An error names the
  // command that failed and what it printed.
  virtual absl::StatusOr<ProvisionedJob> Submit(const ProvisionRequest& request) = 0;

  // The state of each of `job_ids`; an error when the batch system could not be asked (the
  // caller keeps what it knew). Every id asked for is in the answer.
  virtual absl::StatusOr<std::map<std::string, JobState>> States(
      const std::vector<std::string>& job_ids) = 0;

  // Asks the batch system to end the job (its agents are stopped as by SIGTERM); an error names
  // what failed. Cancelling an ended job is not an error.
  virtual absl::Status Cancel(const std::string& job_id) = 0;

  // The job whose agent registers as `agent_id`; nullopt for an agent no job of this provisioner
  // started.
  virtual std::optional<std::string> JobOfAgent(absl::string_view agent_id) const = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_AGENT_PROVISIONER_H_
