// The CURVE keys of a job that a cluster's launcher started (`cohort launch --keys DIR`), for ranks
// on several machines: one folder, made once by `cohort keygen --out DIR --launch N` and given to
// every rank (a shared filesystem, a Kubernetes Secret), holding orchestrator.key/.pub and
// rank-<r>.key/.pub for each of the N ranks (LaunchedAgentId names). Whoever holds the folder may
// join the job.
//
//   absl::Status made = WriteLaunchKeys("keys", 4);
//   absl::StatusOr<ServerSecurityOptions> server = LaunchServerSecurity("keys");   // rank 0
//   absl::StatusOr<CurveClientConfig> mine = LaunchAgentKeys("keys", "rank-3");    // every rank
//
// Thread-safety: free functions over files.
#ifndef COHORT_HARNESS_COHORT_RUN_LAUNCH_KEYS_H_
#define COHORT_HARNESS_COHORT_RUN_LAUNCH_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/orchestrator/server_security.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

// Creates `dir` (mode 0700) if missing and writes the orchestrator's and `world_size` ranks' key
// pairs (secret keys mode 0600). ALREADY_EXISTS naming the file, before writing anything, when
// one of them exists: keys are never overwritten.
absl::Status WriteLaunchKeys(const std::string& dir, uint32_t world_size);

// Rank 0's orchestrator: its key pair, and every rank's public key admitted under its rank's name.
absl::StatusOr<ServerSecurityOptions> LaunchServerSecurity(const std::string& dir);

// An agent's keys: its own pair (<agent_id>.key) and the orchestrator's public key. NOT_FOUND
// naming the file and `cohort keygen --launch` when the folder holds no key for this rank.
absl::StatusOr<CurveClientConfig> LaunchAgentKeys(const std::string& dir,
                                                  const std::string& agent_id);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_LAUNCH_KEYS_H_
