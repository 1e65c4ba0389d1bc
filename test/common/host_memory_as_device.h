// HostMemoryAsDevice: a DeviceMemoryProvider whose "cuda:N" memory is host memory that counts the
// copies made through DeviceMemory, so a test without a GPU can check that code meant for device
// arenas goes through CopyToHost / CopyFromHost rather than reading device pointers. The CPU
// gets plain CpuMemory.
#ifndef COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_
#define COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_

#include <atomic>
#include <cstddef>

#include "runtime/arena/device_memory.h"

namespace cohort::testing {

class CountingDeviceMemory final : public DeviceMemory {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override { return host_.Allocate(bytes); }
  void Free(void* ptr) override { host_.Free(ptr); }
  absl::Status Zero(void* ptr, size_t bytes) override { return host_.Zero(ptr, bytes); }
  absl::Status CopyToHost(void* to, const void* from, size_t bytes) override {
    ++copies_to_host;
    return host_.CopyToHost(to, from, bytes);
  }
  absl::Status CopyFromHost(void* to, const void* from, size_t bytes) override {
    ++copies_from_host;
    return host_.CopyFromHost(to, from, bytes);
  }

  std::atomic<int> copies_to_host{0};
  std::atomic<int> copies_from_host{0};

 private:
  CpuMemory host_;
};

class HostMemoryAsDevice final : public DeviceMemoryProvider {
 public:
  absl::StatusOr<DeviceMemory*> For(cohort_device device) override {
    if (device.kind == COHORT_DEVICE_CPU) return &cpu_;
    return &device_;
  }

  CountingDeviceMemory& device() { return device_; }

 private:
  CpuMemory cpu_;
  CountingDeviceMemory device_;
};

}  // namespace cohort::testing

#endif  // COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_
