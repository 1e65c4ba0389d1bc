// `cohort launch`: one rank of a trial that a cluster's own launcher started (torchrun, Slurm's
// srun, Open MPI's mpirun, or Kubernetes through torchrun's variables), instead of Cohort's
// agents.
//
//   cohort launch EXPERIMENT.yaml [--output DIR] [--set KEY=VALUE]... [--gpus] [--keys DIR]
//                 [--join-timeout SECONDS]
//
// Every rank reads where it stands from the launcher's variables (launcher_environment.h) and
// runs an agent of one slot (a CPU, or with --gpus the GPU of its local rank). Rank 0 also runs
// the orchestrator at MASTER_ADDR:MASTER_PORT, waits for every rank's agent to join, and trains
// the experiment there (RunEmbedded) with resources.slots_per_trial set to the world size and
// max_restarts to 0 (the launcher's restarts count, as under torchrun); Cohort's rank r is the
// launcher's rank r. The other ranks' agents (RunLaunchedRank) end once rank 0 has.
// Rank 0 keeps the run folder (default runs/<name>): when the launcher starts the job again on
// a run folder that holds the experiment, it continues each trial from its latest checkpoint,
// unless the settings changed (refused, the folder left as it was). Ranks on several machines
// meet over CURVE with the job's keys (--keys, launch_keys.h). Exit status: 0 completed,
// 1 error, 2 bad usage, 130 stopped by a signal.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_LAUNCH_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_LAUNCH_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

int RunLaunchCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_LAUNCH_COMMAND_H_
