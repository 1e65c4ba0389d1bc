// What the ranks of a data-parallel trial agree on besides gradients: the same tensor layout, the
// same starting parameters, the metrics of all their batches, and whether to stop.
//
// Every function is a collective: all ranks call it at the same point, in the same order.
// Thread-safety: use from the thread that owns the backend.
#ifndef COHORT_RUNTIME_TRIAL_RANK_SYNC_H_
#define COHORT_RUNTIME_TRIAL_RANK_SYNC_H_

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/plugin/metric_accumulator.h"

namespace cohort {

// FAILED_PRECONDITION naming the ranks whose tensor layout (parameters, and state when given)
// differs from rank 0's.
absl::Status CheckSameLayout(CollectiveBackend& backend, const TensorArena& arena,
                             const TensorArena* state = nullptr);

// Every block's values (parameters, or a state arena's) from rank 0 to all ranks. `backend` moves
// host memory (Gloo); a block in device memory goes through a host copy on every rank.
absl::Status BroadcastParameters(CollectiveBackend& backend, TensorArena& arena);

// Folds every rank's partial metrics into `metrics` on every rank (weighted by records), metric
// by metric whatever order each rank saw them in; FAILED_PRECONDITION naming the metrics when a
// rank holds other ones (their count or their names).
absl::Status MergeMetricsAcrossRanks(CollectiveBackend& backend, MetricAccumulator& metrics);

// True on every rank when `flag` is true on any rank.
absl::StatusOr<bool> AnyRank(CollectiveBackend& backend, bool flag);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_RANK_SYNC_H_
