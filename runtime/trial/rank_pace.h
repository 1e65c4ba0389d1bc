// RankPaceTracker: every rank's pace over a training report's interval, gathered at each training
// report for the straggler scores (control/worker_messages.h RankPace): how long each rank's own
// work per batch took (the plugin's compute, and data + compute + optimizer step, its waiting for
// the other ranks left out), scored against the fastest rank and against the rank's own best.
//
//   RankPaceTracker paces;
//   absl::StatusOr<std::vector<RankPace>> all =
//       paces.Gather(collective, report.timings, batches_since_last_report);
//   if (rank == 0) report.ranks = *all;   // every rank took part; rank 0 holds the result
//
// Thread-safety: one thread (the training thread).
#ifndef COHORT_RUNTIME_TRIAL_RANK_PACE_H_
#define COHORT_RUNTIME_TRIAL_RANK_PACE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class RankPaceTracker {
 public:
  // Every rank calls it at the same training report (one small allgather), with its own timings
  // since the previous report (PhaseTimer's keys) and the batches trained since. Returns every
  // rank's pace, by rank; none when no batch was trained.
  absl::StatusOr<std::vector<RankPace>> Gather(CollectiveBackend& collective,
                                               const std::vector<NamedValue>& timings,
                                               uint64_t batches);

  // Scores gathered per-batch [compute, step] seconds, rank by rank, and remembers each rank's
  // best step (the tracker's memory of the attempt).
  std::vector<RankPace> Score(const std::vector<std::vector<double>>& per_rank);

 private:
  std::vector<double> best_step_;  // by rank: the lowest step_seconds seen in this attempt
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_RANK_PACE_H_
