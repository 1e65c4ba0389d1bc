// The runtime's side of the SDK's opaque cohort_error: an absl::Status in a heap box.
//
// Ownership follows plugin.h: the host frees every error a plugin returns to it (TakeError), and
// a plugin frees an error a host service gave it with host_api.error_destroy (DestroyError).
#ifndef COHORT_RUNTIME_PLUGIN_ERROR_H_
#define COHORT_RUNTIME_PLUGIN_ERROR_H_

#include "absl/status/status.h"
#include "cohort/plugin.h"

struct cohort_error {
  absl::Status status;
};

namespace cohort {

// A new error holding `status`, which must not be OK.
cohort_error* NewError(absl::Status status);

// Converts a returned error into a Status and frees it; nullptr becomes OK.
absl::Status TakeError(cohort_error* error);

// The host_api entries (see plugin.h for their contracts).
cohort_error* ErrorCreate(cohort_status_code code, const char* message, size_t message_len);
void ErrorDestroy(cohort_error* error);
cohort_status_code ErrorCode(const cohort_error* error);
void ErrorMessage(const cohort_error* error, const char** message, size_t* message_len);

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_ERROR_H_
