// What the client commands print with --json, for scripts: `cohort experiment describe --json`
// the orchestrator's description of an experiment as one JSON object, `trial describe --json` one
// of a trial; `experiment list --json`, `task list --json`, `agent list --json` and `checkpoint
// list --json` an array of one object per row.
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

// [{"id":3,"name":"mnist","state":"active","searcher":"grid","progress":0.5,...,
//   "trial_counts":{...}}, ...]: each experiment's summary, as in the description.
std::string ExperimentListJson(const ExperimentList& list);

// [{"id":4,"experiment_id":3,"trial_id":7,"slots":2,"state":"queued","agents":[],
//   "reason":"needs 2 slots ...","queued_unix_time":...}, ...]
std::string TaskListingJson(const TaskListing& listing);

// [{"id":"node-1","hostname":"node-1","slots":8,"busy_slots":2,"connected":true,
//   "last_seen_unix_time":...,"task_ids":[4]}, ...]
std::string AgentTableJson(const AgentTable& table);

// {"experiment_id":3,"experiment_name":"mnist","metric":"loss","smaller_is_better":true,
//  "trial":{...as in describe's trials...},"validations":[{"batches":500,"metrics":{...}}],
//  "checkpoints":[{"id":"trial-7-batch-500",...}]}
std::string TrialDescriptionJson(const TrialDescription& description);

// [{"id":"trial-7-batch-500","experiment_id":3,"trial_id":7,"batches":500,
//   "searcher_metric":0.31,"path":"/...","bytes":1200000}]
std::string CheckpointListingJson(const CheckpointListing& listing);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_EXPERIMENT_JSON_H_
