// cuda_check.h -- turns a failed CUDA or cuBLAS call into std::runtime_error naming the call, the
// error mlp_cuda's classes throw (the plugin makes it a cohort::Error).
#ifndef COHORT_PLUGINS_MLP_CUDA_CUDA_CHECK_H_
#define COHORT_PLUGINS_MLP_CUDA_CUDA_CHECK_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace mlp {

inline void Check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
  }
}

inline void Check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(status));
  }
}

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_CUDA_CUDA_CHECK_H_
