// Where one rank of a trial stands when a cluster's own launcher started it instead of a Cohort
// agent (`cohort launch`): its rank, the world size, its rank on its machine, and the address
// where rank 0 serves the rendezvous, read from the variables the launcher sets:
//
//   torchrun (and Kubernetes' PyTorchJob, JobSet, an Indexed Job written for torchrun):
//       RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
//   Slurm's srun: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and rank 0's host as the first of
//       SLURM_JOB_NODELIST (MASTER_ADDR when set instead); the port MASTER_PORT, else one drawn
//       from SLURM_JOB_ID, so two jobs sharing a node do not meet at the same port
//   Open MPI's mpirun: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
//       and MASTER_ADDR (mpirun has no such variable), MASTER_PORT
//
// The port: COHORT_LAUNCH_PORT when set; else under torchrun, whose own agent serves its store at
// MASTER_PORT on rank 0's host (its workers see TORCHELASTIC_USE_AGENT_STORE=True), the port after
// MASTER_PORT; else MASTER_PORT, or the launcher's default.
//
// torchrun's variables come first (torchrun may itself run under srun or mpirun), then Slurm's,
// then Open MPI's. A launcher some of whose variables are set and others missing, a value that is
// not a number, or values that contradict each other (a rank not below the world size) are an
// error naming the variables.
//
//   absl::StatusOr<LaunchPlacement> placement = ReadLauncherEnvironment(SystemEnvironment());
//
// Thread-safety: pure functions of the environment given.
#ifndef COHORT_RUNTIME_LAUNCH_LAUNCHER_ENVIRONMENT_H_
#define COHORT_RUNTIME_LAUNCH_LAUNCHER_ENVIRONMENT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

struct LaunchPlacement {
  std::string launcher;  // "torchrun", "slurm" or "mpirun": whose variables were read
  uint32_t rank = 0;
  uint32_t world_size = 1;
  uint32_t local_rank = 0;
  std::string master_addr;  // rank 0's host
  uint16_t master_port = 0;  // where rank 0 serves the ranks (see above)

  friend bool operator==(const LaunchPlacement&, const LaunchPlacement&) = default;
};

// A variable's value, or nullopt when it is not set.
using Environment = std::function<std::optional<std::string>(const char* name)>;

// The process's own environment (getenv).
Environment SystemEnvironment();

// The port rank 0 serves at when MASTER_PORT is not set: torchrun's 29500, or under Slurm one
// from 20000 to 39999 drawn from the job's id.
inline constexpr uint16_t kDefaultMasterPort = 29500;

// INVALID_ARGUMENT naming the variables when none of the three launchers' are set (all of them
// listed), when some of one launcher's are missing, or when a value is not a whole number in range.
absl::StatusOr<LaunchPlacement> ReadLauncherEnvironment(const Environment& environment);

// The first host of a Slurm host list: "node[07-09,12],gpu-1" gives "node07", "a,b" gives "a".
// INVALID_ARGUMENT for an empty list or an unclosed bracket.
absl::StatusOr<std::string> FirstSlurmHost(absl::string_view nodelist);

}  // namespace cohort

#endif  // COHORT_RUNTIME_LAUNCH_LAUNCHER_ENVIRONMENT_H_
