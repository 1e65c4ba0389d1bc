// CUDA device memory for tensor arenas, through the CUDA runtime API. Built into
// cohort_cuda_memory.so only (see cuda_memory_module.h).
//
// Every call first makes the memory's device current, so one process may hold arenas on several
// devices. Given a stream, Zero() is a memset enqueued there, ordered with the plugin's work and
// the optimizer's kernels on that stream, and nothing waits; without one it waits for the
// device's pending work and completes before it returns. Page-locked host memory (cudaHostAlloc)
// is what a checkpoint's capture copies into.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/arena/cuda/cuda_memory_module.h"

namespace cohort {
namespace {

absl::Status CudaError(cudaError_t error, absl::string_view what, int ordinal) {
  return absl::InternalError(absl::StrCat(what, " on cuda:", ordinal,
                                          " failed: ", cudaGetErrorName(error), " (",
                                          cudaGetErrorString(error), ")"));
}

class CudaMemory final : public DeviceMemory {
 public:
  CudaMemory(int ordinal, cudaStream_t stream) : ordinal_(ordinal), stream_(stream) {}

  absl::StatusOr<void*> Allocate(size_t bytes) override {
    if (bytes == 0) return absl::InvalidArgumentError("cannot allocate 0 bytes");
    if (cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess)
      return CudaError(e, "cudaSetDevice", ordinal_);
    void* ptr = nullptr;
    if (cudaError_t e = cudaMalloc(&ptr, bytes); e != cudaSuccess) {
      return absl::ResourceExhaustedError(absl::StrCat("cudaMalloc of ", bytes,
                                                       " bytes on cuda:", ordinal_,
                                                       " failed: ", cudaGetErrorString(e)));
    }
    // Zero-filled when it is returned, whatever the stream.
    absl::Status zeroed = Zero(ptr, bytes);
    if (zeroed.ok() && stream_ != nullptr) {
      zeroed = CudaStatusOf(cudaStreamSynchronize(stream_), "zeroing new memory");
    }
    if (!zeroed.ok()) {
      cudaFree(ptr);
      return zeroed;
    }
    return ptr;  // cudaMalloc aligns to at least 256 bytes
  }

  void Free(void* ptr) override {
    if (ptr == nullptr) return;
    cudaSetDevice(ordinal_);
    cudaFree(ptr);
  }

  absl::Status Zero(void* ptr, size_t bytes) override {
    if (cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess)
      return CudaError(e, "cudaSetDevice", ordinal_);
    if (stream_ != nullptr) {
      return CudaStatusOf(cudaMemsetAsync(ptr, 0, bytes, stream_), "cudaMemsetAsync");
    }
    // Kernels still queued on a non-blocking stream (an optimizer step reading the gradients) do
    // not order with cudaMemset's default stream: wait for them first.
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      return CudaError(e, "cudaDeviceSynchronize", ordinal_);
    }
    if (cudaError_t e = cudaMemset(ptr, 0, bytes); e != cudaSuccess)
      return CudaError(e, "cudaMemset", ordinal_);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      return CudaError(e, "cudaDeviceSynchronize", ordinal_);
    }
    return absl::OkStatus();
  }

  absl::Status CopyToHost(void* to, const void* from, size_t bytes) override {
    return Copy(to, from, bytes, cudaMemcpyDeviceToHost, "cudaMemcpy to the host");
  }

  absl::Status CopyFromHost(void* to, const void* from, size_t bytes) override {
    return Copy(to, from, bytes, cudaMemcpyHostToDevice, "cudaMemcpy from the host");
  }

  absl::StatusOr<void*> AllocatePinnedHost(size_t bytes) override {
    if (bytes == 0) return absl::InvalidArgumentError("cannot allocate 0 bytes");
    if (cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess)
      return CudaError(e, "cudaSetDevice", ordinal_);
    void* ptr = nullptr;
    if (cudaError_t e = cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault); e != cudaSuccess) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cudaHostAlloc of ", bytes, " bytes of page-locked memory for cuda:", ordinal_,
          " failed: ", cudaGetErrorString(e)));
    }
    return ptr;
  }

  void FreePinnedHost(void* ptr) override {
    if (ptr != nullptr) cudaFreeHost(ptr);
  }

 private:
  // The device's streams may be non-blocking, which a plain cudaMemcpy does not wait for: the
  // device is synchronized first. cudaMemcpy between pageable host memory and the device returns
  // once the copy is complete.
  absl::Status Copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                    absl::string_view what) {
    if (bytes == 0) return absl::OkStatus();
    if (cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess)
      return CudaError(e, "cudaSetDevice", ordinal_);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      return CudaError(e, "cudaDeviceSynchronize", ordinal_);
    }
    if (cudaError_t e = cudaMemcpy(to, from, bytes, kind); e != cudaSuccess)
      return CudaError(e, what, ordinal_);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
      return CudaError(e, what, ordinal_);
    return absl::OkStatus();
  }

  absl::Status CudaStatusOf(cudaError_t error, absl::string_view what) const {
    return error == cudaSuccess ? absl::OkStatus() : CudaError(error, what, ordinal_);
  }

  int ordinal_;
  cudaStream_t stream_;  // where Zero enqueues; nullptr: Zero waits for the device
};

}  // namespace
}  // namespace cohort

extern "C" __attribute__((visibility("default"))) cohort::DeviceMemory* cohort_cuda_memory_open(
    int ordinal, void* stream, char* error, size_t error_len) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || ordinal < 0 || ordinal >= count) {
    const std::string why =
        e != cudaSuccess
            ? absl::StrCat("no usable CUDA device: ", cudaGetErrorName(e), " (",
                           cudaGetErrorString(e), ")")
            : absl::StrCat("CUDA device ", ordinal, " does not exist; this process sees ", count);
    std::snprintf(error, error_len, "%s", why.c_str());
    return nullptr;
  }
  return new cohort::CudaMemory(ordinal, static_cast<cudaStream_t>(stream));
}
static_assert(std::is_same_v<decltype(&cohort_cuda_memory_open), cohort_cuda_memory_open_fn>);

extern "C" __attribute__((visibility("default"))) int cohort_cuda_device_count(char* error,
                                                                               size_t error_len) {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    std::snprintf(error, error_len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
  }
  return count;
}
static_assert(std::is_same_v<decltype(&cohort_cuda_device_count), cohort_cuda_device_count_fn>);
