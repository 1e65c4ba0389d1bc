// CudaContext: what every reducer of the CUDA exchange module shares on one device: the device
// ordinal, the plugin's compute stream, the communication stream, and a cuBLAS handle bound to
// the communication stream (made on first use: only PowerSGD multiplies). CudaStatus turns a CUDA
// runtime error into an absl::Status naming what failed (runtime/module/cuda_status.h).
//
// Thread-safety: the fields are set once, before any reducer exists; Blas() is called by the
// thread that reduces (one at a time).
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_CONTEXT_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_CONTEXT_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/module/cuda_status.h"

namespace cohort {

// OK for CUBLAS_STATUS_SUCCESS; otherwise INTERNAL naming the status.
inline absl::Status CublasStatus(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cublasGetStatusName(status), " (",
                                          cublasGetStatusString(status), ")"));
}

struct CudaContext {
  int device = 0;
  cudaStream_t compute = nullptr;
  cudaStream_t communication = nullptr;
  cublasHandle_t blas = nullptr;  // made by Blas(), destroyed with the exchange

  // The cuBLAS handle, enqueueing on the communication stream.
  absl::StatusOr<cublasHandle_t> Blas() {
    if (blas != nullptr) return blas;
    if (absl::Status s = CublasStatus(cublasCreate(&blas), "cublasCreate"); !s.ok()) return s;
    if (absl::Status s = CublasStatus(cublasSetStream(blas, communication), "cublasSetStream");
        !s.ok()) {
      return s;
    }
    return blas;
  }
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_CONTEXT_H_
