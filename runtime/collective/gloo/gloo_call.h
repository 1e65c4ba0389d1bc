// CallGloo: runs a Gloo call and turns whatever it throws into an absl::Status, so no exception
// leaves the Gloo backend.
//
//   absl::Status s = CallGloo("gloo allreduce", [&] { gloo::allreduce(options); });
//
// Codes: a GlooStoreError keeps its store's code; a Gloo I/O timeout is DEADLINE_EXCEEDED; another
// Gloo I/O failure (a peer went away) is UNAVAILABLE; anything else is INTERNAL. Each message
// starts with `what`.
//
// Thread-safety: stateless.
#ifndef COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_CALL_H_
#define COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_CALL_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cohort {

absl::Status CallGloo(absl::string_view what, absl::FunctionRef<void()> call) noexcept;

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_CALL_H_
