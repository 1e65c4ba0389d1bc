// CudaStatus: a CUDA runtime error as an absl::Status naming what failed, for the sources of the
// CUDA modules (the only ones that include the CUDA runtime's headers).
#ifndef COHORT_RUNTIME_MODULE_CUDA_STATUS_H_
#define COHORT_RUNTIME_MODULE_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cohort {

// OK for cudaSuccess; otherwise INTERNAL "<what>: <error name> (<error text>)".
inline absl::Status CudaStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_MODULE_CUDA_STATUS_H_
