// DeviceBuffer<T>: `count` elements of T in CUDA device memory on the current device, freed with
// the buffer. Allocation failures come back from Allocate as RESOURCE_EXHAUSTED.
//
//   DeviceBuffer<float> scratch;
//   if (absl::Status s = scratch.Allocate(n); !s.ok()) return s;
//   kernel<<<...>>>(scratch.data(), n);
//
// Thread-safety: none (one owner).
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_BUFFER_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cohort {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Replaces the contents with `count` uninitialized elements (none for 0).
  absl::Status Allocate(uint64_t count) {
    cudaFree(data_);
    data_ = nullptr;
    count_ = 0;
    if (count == 0) return absl::OkStatus();
    void* memory = nullptr;
    if (cudaError_t e = cudaMalloc(&memory, count * sizeof(T)); e != cudaSuccess) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cudaMalloc of ", count * sizeof(T),
                       " bytes for the exchange failed: ", cudaGetErrorString(e)));
    }
    data_ = static_cast<T*>(memory);
    count_ = count;
    return absl::OkStatus();
  }

  T* data() const { return data_; }
  uint64_t count() const { return count_; }

 private:
  T* data_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_DEVICE_BUFFER_H_
