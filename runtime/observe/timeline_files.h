// Where the ranks of a trial leave their timelines (TraceWriter files) for the orchestrator to
// merge: a ".timelines" folder in the experiment's checkpoint storage, which every host of a
// trial and the orchestrator reach, as Determined keeps its TensorBoard files beside the
// checkpoints. Its name is no checkpoint id, so the storage never takes it for a checkpoint.
//
//   <checkpoint root>/.timelines/trial7-attempt1-rank0-1764031234567.json
//
// The last part is when the rank started (Unix milliseconds): attempt numbers begin again when
// an orchestrator restarts, and no file may replace an earlier attempt's.
#ifndef COHORT_RUNTIME_OBSERVE_TIMELINE_FILES_H_
#define COHORT_RUNTIME_OBSERVE_TIMELINE_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

// The path of one rank's timeline; creates its folder. Errors name the folder.
absl::StatusOr<std::string> RankTimelinePath(const std::string& checkpoint_root, uint64_t trial_id,
                                             uint32_t attempt, uint32_t rank,
                                             uint64_t started_unix_ms);

// Every rank timeline of `trial_id` under `checkpoint_root`, sorted; none if there is no folder.
std::vector<std::string> TrialTimelinePaths(const std::string& checkpoint_root, uint64_t trial_id);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_TIMELINE_FILES_H_
