// Shared checkpoint storage keeps each run's checkpoints in <host_path>[/<storage_path>]/<the run
// folder's name>: two runs whose folders share a name (runs/hp and other/hp) would share that
// folder, and each would delete the other's checkpoints or take them for its own. A run claims
// its folder there with a marker, `.cohort-run-folder`, naming its run folder; a new run refuses
// a folder that another run claimed or that already holds anything.
//
//   if (absl::Status free = CheckCheckpointRootFree(root, run_folder); !free.ok()) ...;
//   ... create the run folder ...
//   if (absl::Status claimed = ClaimCheckpointRoot(root, run_folder); !claimed.ok()) ...;
//
// Thread-safety: free functions; of two processes claiming one folder, one wins (the marker is
// created exclusively).
#ifndef COHORT_RUNTIME_CHECKPOINT_ROOT_CLAIM_H_
#define COHORT_RUNTIME_CHECKPOINT_ROOT_CLAIM_H_

#include <string>

#include "absl/status/status.h"

namespace cohort {

inline constexpr char kCheckpointRootMarker[] = ".cohort-run-folder";

// OK when `root` does not exist, is an empty folder, or is claimed by the run in `run_folder` (an
// absolute path: a start of it that failed before training, tried again) and holds nothing else;
// FAILED_PRECONDITION naming the run that claimed it, or what it holds (an earlier run's
// checkpoints, when that run's folder was removed and made again), otherwise. Reads only.
absl::Status CheckCheckpointRootFree(const std::string& root, const std::string& run_folder);

// Makes `root` (and its parents) and claims it for the run in `run_folder` (an absolute path),
// unless a run already did: FAILED_PRECONDITION naming that run when it is another one
// (`allow_claimed`: a resume of a run that may have moved, whose claim stays as it is).
absl::Status ClaimCheckpointRoot(const std::string& root, const std::string& run_folder,
                                 bool allow_claimed);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_ROOT_CLAIM_H_
