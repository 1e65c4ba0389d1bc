// SlurmProvisioner: the AgentProvisioner of `cohort orchestrator --resource-manager slurm`. Each
// task becomes a Slurm job (sbatch of srun'd `cohort agent`s, slurm_job.h), its state is read with
// squeue, and scancel ends it.
//
//   SlurmSettings settings;  // partition, account, sbatch options, endpoint, executable, ...
//   absl::StatusOr<std::unique_ptr<SlurmProvisioner>> slurm = SlurmProvisioner::Create(settings);
//   OrchestratorOptions options;
//   options.provisioner = slurm->get();
//
// The Slurm commands run through a CommandRunner, RunCommand by default (tests may script one);
// each waits at most 60 s. Thread-safety: as AgentProvisioner's (the const methods read only the
// settings, which nothing changes after Create).
#ifndef COHORT_RUNTIME_SLURM_SLURM_PROVISIONER_H_
#define COHORT_RUNTIME_SLURM_SLURM_PROVISIONER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/base/run_command.h"
#include "runtime/orchestrator/agent_provisioner.h"
#include "runtime/slurm/slurm_job.h"

namespace cohort {

// Runs argv with `input` on its stdin, as RunCommand does.
using CommandRunner = std::function<absl::StatusOr<CommandOutput>(
    const std::vector<std::string>& argv, const std::string& input)>;

class SlurmProvisioner : public AgentProvisioner {
 public:
  // With settings.slots_per_node 0, asks sinfo for the partition's slots per node (its nodes'
  // smallest count of GPUs, or of CPUs). An error names what Slurm could not answer. Creates
  // settings.log_dir when missing.
  static absl::StatusOr<std::unique_ptr<SlurmProvisioner>> Create(SlurmSettings settings,
                                                                  CommandRunner run = {});

  const SlurmSettings& settings() const { return settings_; }

  std::string name() const override { return "Slurm"; }
  absl::Status CheckCanEverFit(uint32_t slots) const override;
  absl::StatusOr<ProvisionedJob> Submit(const ProvisionRequest& request) override;
  absl::StatusOr<std::map<std::string, JobState>> States(
      const std::vector<std::string>& job_ids) override;
  absl::Status Cancel(const std::string& job_id) override;
  std::optional<std::string> JobOfAgent(absl::string_view agent_id) const override;

 private:
  SlurmProvisioner(SlurmSettings settings, CommandRunner run)
      : settings_(std::move(settings)), run_(std::move(run)) {}

  // stdout of a command that exited 0; else an error naming it with its exit code and stderr.
  absl::StatusOr<std::string> Run(const std::vector<std::string>& argv,
                                  const std::string& input = "");

  SlurmSettings settings_;
  CommandRunner run_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SLURM_SLURM_PROVISIONER_H_
