// Where the ranks of a launched trial (`cohort launch`) meet on the network: each rank's agent id,
// whether rank 0's address is this machine's loopback, the address of this machine that rank 0's
// host reaches it at (which its workers publish to their peers for Gloo), and whether rank 0
// still serves.
//
//   const std::string id = LaunchedAgentId(placement.rank, placement.world_size);  // "rank-03"
//   absl::StatusOr<std::string> mine = AddressToward(placement.master_addr);
//
// Thread-safety: free functions; AddressToward asks the system's resolver.
#ifndef COHORT_RUNTIME_LAUNCH_RANK_NETWORK_H_
#define COHORT_RUNTIME_LAUNCH_RANK_NETWORK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// "rank-<r>" with r zero-padded to the digits of world_size - 1, so that the ids sort as the
// ranks do (the orchestrator places a trial's ranks on agents in ascending id order, so Cohort's
// rank r is the launcher's rank r).
std::string LaunchedAgentId(uint32_t rank, uint32_t world_size);

// Whether `host` names this machine's loopback: "localhost", "127.x.y.z" or "::1" (unlike
// IsLoopbackHost of http_endpoint.h, which takes IPv4 addresses only).
bool IsLoopbackName(absl::string_view host);

// The address of this machine from which packets to `host` leave (what a UDP socket connected to
// it reports; nothing is sent): "127.0.0.1" for a loopback host. UNAVAILABLE naming the host when
// it does not resolve or no route leads there.
absl::StatusOr<std::string> AddressToward(const std::string& host);

// Whether something accepts TCP connections at host:port within `timeout_seconds` (a connect,
// closed at once): how a rank tells that rank 0 still serves the job. False when the host does
// not resolve, refuses, or does not answer in time.
bool AcceptsConnections(const std::string& host, uint16_t port, double timeout_seconds);

// AcceptsConnections, telling a refusal (nothing listens there: on a host that answers, the
// process has ended) from no answer (a timeout, a name that does not resolve now: a busy or lost
// network as much as a lost host).
enum class ProbeAnswer { kServing, kRefused, kNoAnswer };
ProbeAnswer ProbeConnections(const std::string& host, uint16_t port, double timeout_seconds);

}  // namespace cohort

#endif  // COHORT_RUNTIME_LAUNCH_RANK_NETWORK_H_
