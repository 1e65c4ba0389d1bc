// ZeroMQ endpoints as a user types them: "tcp://10.0.0.5:29400", or "host:port" the way other
// tools take an address (which ZeroMQ refuses with a bare "Invalid argument").
//
//   if (absl::Status s = CheckEndpointText("--orchestrator", value); !s.ok()) usage error;
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_CONTROL_ENDPOINT_TEXT_H_
#define COHORT_RUNTIME_CONTROL_ENDPOINT_TEXT_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort {

// INVALID_ARGUMENT unless `endpoint` names a transport ("transport://address"), naming `flag` and
// what was given, with the tcp:// form of a "host:port" one as the likely meaning.
absl::Status CheckEndpointText(absl::string_view flag, absl::string_view endpoint);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_ENDPOINT_TEXT_H_
