// ReachableRendezvousEndpoint: the endpoint where this agent's workers meet the ranks of a task
// spanning agents. The orchestrator names it in StartTask.rendezvous; when it bound every
// interface ("tcp://0.0.0.0:29402", "tcp://*:29402", "tcp://[::]:29402") that name is no address
// to connect to, and the orchestrator's host as this agent reaches it takes the wildcard's place.
//
//   ReachableRendezvousEndpoint("tcp://0.0.0.0:29402", "tcp://10.0.0.5:29400")
//       == "tcp://10.0.0.5:29402"
//   ReachableRendezvousEndpoint("tcp://10.0.0.7:29402", "tcp://10.0.0.5:29400")
//       == "tcp://10.0.0.7:29402"   // a real host is kept
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_AGENT_RENDEZVOUS_ENDPOINT_H_
#define COHORT_RUNTIME_AGENT_RENDEZVOUS_ENDPOINT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// `rendezvous` unchanged unless both endpoints are "tcp://HOST:PORT", its host is a wildcard and
// the orchestrator's is not.
std::string ReachableRendezvousEndpoint(absl::string_view rendezvous,
                                        absl::string_view orchestrator);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_RENDEZVOUS_ENDPOINT_H_
