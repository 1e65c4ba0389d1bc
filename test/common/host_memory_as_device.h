// HostMemoryAsDevice: a DeviceMemoryProvider whose "cuda:N" memory is host memory that counts the
// copies made through DeviceMemory, so a test without a GPU can check that code meant for device
// arenas goes through CopyToHost / CopyFromHost rather than reading device pointers (and counts
// the page-locked memory it hands out, which may be refused). The CPU
// gets plain CpuMemory. HostGradientOps: DeviceGradientOps doing the CPU's arithmetic on such
// memory, counting its calls, so a test can check that the work stayed "on the device".
// HostValueReader: a DeviceValueReader over such memory, counting captures and reads.
#ifndef COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_
#define COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_

#include <atomic>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/arena/device_gradient_ops.h"
#include "runtime/arena/device_memory.h"
#include "runtime/plugin/device_value_reader.h"

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
  // "Page-locked" memory is host memory counted while held; `refuse_pinning` fails it.
  absl::StatusOr<void*> AllocatePinnedHost(size_t bytes) override {
    if (refuse_pinning) return absl::ResourceExhaustedError("no page-locked memory for the test");
    absl::StatusOr<void*> memory = host_.Allocate(bytes);
    if (memory.ok()) {
      ++pinned_allocations;
      ++pinned_held;
    }
    return memory;
  }
  void FreePinnedHost(void* ptr) override {
    if (ptr == nullptr) return;
    --pinned_held;
    host_.Free(ptr);
  }

  std::atomic<int> copies_to_host{0};
  std::atomic<int> copies_from_host{0};
  std::atomic<int> pinned_allocations{0};  // ever
  std::atomic<int> pinned_held{0};         // now
  std::atomic<bool> refuse_pinning{false};

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

// Reads the noted values from host memory when EnqueueCopies comes, as a device's copy would once
// its stream reached them.
class HostValueReader final : public DeviceValueReader {
 public:
  absl::StatusOr<uint32_t> Capture(const void* device_value, cohort_dtype dtype) override {
    ++captures;
    noted_.push_back({device_value, dtype});
    return static_cast<uint32_t>(values_.size() + noted_.size() - 1);
  }
  absl::Status EnqueueCopies() override {
    ++copy_calls;
    for (const auto& [value, dtype] : noted_) {
      values_.push_back(dtype == COHORT_DTYPE_FLOAT32 ? *static_cast<const float*>(value)
                                                      : *static_cast<const double*>(value));
    }
    noted_.clear();
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<double>> TakeAll() override {
    ++takes;
    if (absl::Status s = EnqueueCopies(); !s.ok()) return s;
    return std::exchange(values_, {});
  }

  int captures = 0;
  int copy_calls = 0;
  int takes = 0;

 private:
  std::vector<std::pair<const void*, cohort_dtype>> noted_;
  std::vector<double> values_;
};

class HostGradientOps final : public DeviceGradientOps {
 public:
  absl::Status Divide(void* grad, cohort_dtype dtype, uint64_t count, uint64_t divisor) override {
    ++divides;
    if (dtype == COHORT_DTYPE_FLOAT32) {
      DivideAll(static_cast<float*>(grad), count, divisor);
    } else if (dtype == COHORT_DTYPE_FLOAT64) {
      DivideAll(static_cast<double*>(grad), count, divisor);
    } else {
      return absl::InvalidArgumentError("only float32 and float64");
    }
    return absl::OkStatus();
  }
  absl::Status CheckFinite(const void* grad, cohort_dtype dtype, uint64_t count) override {
    ++checks;
    for (uint64_t i = 0; i < count && dtype == COHORT_DTYPE_FLOAT32; ++i) {
      if (!std::isfinite(static_cast<const float*>(grad)[i])) flag_ = true;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<bool> TakeNonFinite() override {
    ++flag_reads;
    const bool found = flag_;
    flag_ = false;
    return found;
  }

  int divides = 0;
  int checks = 0;
  int flag_reads = 0;

 private:
  template <class T>
  static void DivideAll(T* values, uint64_t count, uint64_t divisor) {
    const T scale = T{1} / static_cast<T>(divisor);
    for (uint64_t i = 0; i < count; ++i) values[i] *= scale;
  }

  bool flag_ = false;
};

}  // namespace cohort::testing

#endif  // COHORT_TEST_COMMON_HOST_MEMORY_AS_DEVICE_H_
