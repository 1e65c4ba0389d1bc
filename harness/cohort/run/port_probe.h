// CheckTcpPortFree: whether a TCP listener could bind `host`:`port` now, asked before a command
// writes anything (`cohort launch`'s rank 0 listens at MASTER_PORT), so that a taken port is
// refused with the run folder as it was.
//
//   if (absl::Status free = CheckTcpPortFree("0.0.0.0", 29500); !free.ok()) ...;
//
// It binds a socket (SO_REUSEADDR, as ZeroMQ's listeners do, so a port left in TIME_WAIT counts as
// free) and closes it: another process may still take the port before the real listener binds.
//
// Thread-safety: a free function.
#ifndef COHORT_HARNESS_COHORT_RUN_PORT_PROBE_H_
#define COHORT_HARNESS_COHORT_RUN_PORT_PROBE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace cohort {

// OK when `host` (an IPv4 address: 0.0.0.0 or 127.0.0.1) `port` can be bound; UNAVAILABLE naming
// the address and the reason (Address already in use) when not; INVALID_ARGUMENT for a host that
// is no IPv4 address.
absl::Status CheckTcpPortFree(const std::string& host, uint16_t port);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_PORT_PROBE_H_
