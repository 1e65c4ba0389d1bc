#include "runtime/exchange/cuda/cuda_gradient_ops.h"

#include "runtime/exchange/cuda/gradient_kernels.h"

namespace cohort {

CudaGradientOps::~CudaGradientOps() {
  if (flag_ == nullptr) return;
  cudaSetDevice(context_.device);
  cudaStreamSynchronize(context_.compute);
  cudaFree(flag_);
  cudaFreeHost(host_flag_);
}

absl::Status CudaGradientOps::Divide(void* grad, cohort_dtype dtype, uint64_t count,
                                     uint64_t divisor) {
  if ((dtype != COHORT_DTYPE_FLOAT32 && dtype != COHORT_DTYPE_FLOAT64) || divisor == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot divide gradients of dtype ",
                                                   static_cast<int>(dtype), " by ", divisor,
                                                   " on the device"));
  }
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  return CudaStatus(EnqueueDivide(grad, dtype, count, divisor, context_.compute),
                    "averaging gradients on the device");
}

absl::Status CudaGradientOps::CheckFinite(const void* grad, cohort_dtype dtype, uint64_t count) {
  if (absl::Status s = EnsureFlag(); !s.ok()) return s;
  return CudaStatus(EnqueueFlagNonFinite(grad, dtype, count, flag_, context_.compute),
                    "checking gradients for NaN and infinity");
}

absl::StatusOr<bool> CudaGradientOps::TakeNonFinite() {
  if (absl::Status s = EnsureFlag(); !s.ok()) return s;
  cudaStream_t stream = context_.compute;
  if (absl::Status s = CudaStatus(
          cudaMemcpyAsync(host_flag_, flag_, sizeof *flag_, cudaMemcpyDeviceToHost, stream),
          "reading the non-finite flag");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CudaStatus(cudaMemsetAsync(flag_, 0, sizeof *flag_, stream),
                                  "clearing the non-finite flag");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CudaStatus(cudaStreamSynchronize(stream), "waiting for the gradient checks");
      !s.ok()) {
    return s;
  }
  return *host_flag_ != 0;
}

absl::Status CudaGradientOps::EnsureFlag() {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  if (flag_ != nullptr) return absl::OkStatus();
  void* flag = nullptr;
  if (absl::Status s = CudaStatus(cudaMalloc(&flag, sizeof *flag_), "allocating the flag");
      !s.ok()) {
    return s;
  }
  void* host_flag = nullptr;
  if (absl::Status s =
          CudaStatus(cudaMallocHost(&host_flag, sizeof *host_flag_), "allocating the flag's copy");
      !s.ok()) {
    cudaFree(flag);
    return s;
  }
  flag_ = static_cast<uint32_t*>(flag);
  host_flag_ = static_cast<uint32_t*>(host_flag);
  return CudaStatus(cudaMemsetAsync(flag_, 0, sizeof *flag_, context_.compute),
                    "clearing the non-finite flag");
}

}  // namespace cohort
