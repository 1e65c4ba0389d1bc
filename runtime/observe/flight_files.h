// Where the ranks of a trial keep their flight records (flight_record.h): a ".flight" folder in
// the experiment's checkpoint storage, which every host of a trial and the orchestrator reach (as
// the timelines' ".timelines"). One file per rank of each task (one attempt of a trial); task ids
// are never reused, so no attempt's file replaces another's.
//
//   <checkpoint root>/.flight/trial7-task12-rank1.flight
//
// Thread-safety: safe to call from any thread.
#ifndef COHORT_RUNTIME_OBSERVE_FLIGHT_FILES_H_
#define COHORT_RUNTIME_OBSERVE_FLIGHT_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

// The path of one rank's record; creates its folder. Errors name the folder.
absl::StatusOr<std::string> RankFlightPath(const std::string& checkpoint_root, uint64_t trial_id,
                                           uint64_t task_id, uint32_t rank);

// Every rank's record of task `task_id` of trial `trial_id`, sorted; none without the folder.
std::vector<std::string> TaskFlightPaths(const std::string& checkpoint_root, uint64_t trial_id,
                                         uint64_t task_id);

// The newest task of `trial_id` that left records, if any did.
std::optional<uint64_t> LatestFlightTask(const std::string& checkpoint_root, uint64_t trial_id);

// Removes the records of task `task_id` of `trial_id` (once it ended and nothing needs them).
void RemoveTaskFlights(const std::string& checkpoint_root, uint64_t trial_id, uint64_t task_id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_FLIGHT_FILES_H_
