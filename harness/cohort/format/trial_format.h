// What `cohort trial describe` and `cohort checkpoint list` print:
//
//   trial 7 (experiment 3: mnist-grid)
//     state            running
//     ...
//   validations:
//   BATCHES  accuracy  loss
//   500      0.91      0.31
//   checkpoints:
//   CHECKPOINT          BATCHES  METRIC  SIZE    PATH
//   trial-7-batch-500   500      0.31    1.2 MB  /var/lib/cohort/checkpoints/experiment-3/...
//
// Thread-safety: pure functions.
#ifndef COHORT_HARNESS_COHORT_FORMAT_TRIAL_FORMAT_H_
#define COHORT_HARNESS_COHORT_FORMAT_TRIAL_FORMAT_H_

#include <cstdint>
#include <string>

#include "runtime/client/client_messages.h"

namespace cohort {

// "812 B", "28.4 KB", "1.20 MB", "3.10 GB" (powers of 1000, as `ls -h --si`).
std::string FormatBytes(uint64_t bytes);

// The trial's fields, a table of its validations (a column per metric, in the order the first
// validation named them) and a table of its checkpoints.
std::string FormatTrialDescription(const TrialDescription& description);

// A table of checkpoints: CHECKPOINT, TRIAL, BATCHES, METRIC (the searcher's, validated after
// the same batches, or "-"), SIZE and PATH; "no checkpoints" when there are none.
std::string FormatCheckpointListing(const CheckpointListing& listing);

// The `count` checkpoints of `listing` with the best searcher metric, best first (equals in the
// listing's order: by trial, oldest first); those without a metric, or with a NaN, are left out,
// and so are those storage holds damaged or not at all (none to use).
// `cohort checkpoint list
// --best N`, as Determined's `det experiment list-checkpoints --best N`.
CheckpointListing BestCheckpoints(const CheckpointListing& listing, bool smaller_is_better,
                                  size_t count);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_FORMAT_TRIAL_FORMAT_H_
