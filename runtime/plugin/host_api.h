// The host's service table handed to every plugin (cohort_host_api of plugin.h), implemented over
// ModelHost, Hyperparameters, TensorArena, BatchMetrics and the state streams.
//
// Every service validates its arguments and returns a host-created error naming the problem; none
// trusts the plugin's pointers beyond what plugin.h promises.
#ifndef COHORT_RUNTIME_PLUGIN_HOST_API_H_
#define COHORT_RUNTIME_PLUGIN_HOST_API_H_

#include "cohort/plugin.h"

namespace cohort {

// The table, in static storage, for the ABI this runtime implements.
const cohort_host_api* HostApi();

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_HOST_API_H_
