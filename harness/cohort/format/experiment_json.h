// What `cohort experiment describe --json` prints: the orchestrator's description of an
// experiment as one JSON object, for scripts.
//
//   {"id":3,"name":"mnist","state":"active","searcher":"grid","metric":"loss",
//    "smaller_is_better":true,"progress":0.5,"slots_per_trial":2,"submitted_unix_time":...,
//    "ended_unix_time":null,"error":"","trial_counts":{"total":2,"active":1,...},
//    "trials":[{"id":7,"request_id":1,"state":"running","hyperparameters":{"lr":0.1},
//               "batches_trained":100,"target_batches":500,"restarts":0,"task_id":4,
//               "best_metric":null,"latest_checkpoint":null,"latest_training":{"loss":0.3},
//               "latest_validation":{},"error":""}],
//    "config_yaml":"..."}
//
// States are the CLI's lower-case words; a time or value not there yet is null.
//
// Thread-safety: reentrant.
#ifndef COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_JSON_H_
#define COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_JSON_H_

#include <string>

#include "runtime/client/client_messages.h"

namespace cohort {

std::string ExperimentDescriptionJson(const ExperimentDescription& description);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_JSON_H_
