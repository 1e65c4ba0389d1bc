// CollectiveFailure: a trial failure met while taking part in a collective with the other ranks
// (the gradient exchange, a broadcast, a metrics merge): a connection a peer closed, a collective
// that timed out. It is often another rank's failure seen from here, so a worker whose trial fails
// so exits with kCollectiveFailureExitCode (worker_messages.h), and the orchestrator names a rank
// that failed on its own (a plugin's error) before it, whichever exit it heard first.
//
//   return CollectiveFailure(status, absl::StrCat("batch 12, gradient exchange: ", ...));
//   if (IsCollectiveFailure(status)) exit_code = kCollectiveFailureExitCode;
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_BASE_COLLECTIVE_FAILURE_H_
#define COHORT_RUNTIME_BASE_COLLECTIVE_FAILURE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort {

// `cause` (not OK) told as `message`, with its code and payloads (a PermanentFailure stays one),
// marked as met in a collective unless it is permanent: every rank fails alike at a failure each
// would meet, and none of them is the others' cause.
absl::Status CollectiveFailure(const absl::Status& cause, absl::string_view message);

// Marked by CollectiveFailure.
bool IsCollectiveFailure(const absl::Status& status);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_COLLECTIVE_FAILURE_H_
