// PermanentFailure: a trial failure that does not depend on the attempt (the config, the plugin's
// contract, the metric names, a full disk), so a restart would only repeat it after training
// again. A worker whose trial fails so exits with kPermanentFailureExitCode (worker_messages.h),
// and the orchestrator ends the trial at once instead of restarting it.
//
//   return PermanentFailure(absl::FailedPreconditionError("searcher.metric: ..."));
//   if (IsPermanentFailure(status)) exit_code = kPermanentFailureExitCode;
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_BASE_PERMANENT_FAILURE_H_
#define COHORT_RUNTIME_BASE_PERMANENT_FAILURE_H_

#include "absl/status/status.h"

namespace cohort {

// `status` (not OK), marked as a failure every attempt would meet.
absl::Status PermanentFailure(absl::Status status);

// Marked by PermanentFailure, or RESOURCE_EXHAUSTED (no space left on the device: a restart
// would write the same checkpoint to the same full disk).
bool IsPermanentFailure(const absl::Status& status);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_PERMANENT_FAILURE_H_
