// DeviceMemory: where arena bytes come from. One implementation per device kind; the CPU one is
// here, a CUDA one lives in a separately built module so the core never links the CUDA runtime.
//
// Thread-safety: implementations are safe to call from any thread.
#ifndef COHORT_RUNTIME_ARENA_DEVICE_MEMORY_H_
#define COHORT_RUNTIME_ARENA_DEVICE_MEMORY_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"

namespace cohort {

// INVALID_ARGUMENT for a device kind the SDK does not define or a negative ordinal.
absl::Status ValidateDevice(cohort_device device);

// "cpu", "cuda:1", "device(kind 7)".
std::string DeviceName(cohort_device device);

// The device DeviceName names: "cpu" or "cuda:N" (N a whole number). INVALID_ARGUMENT quoting
// anything else and listing those two forms.
absl::StatusOr<cohort_device> ParseDeviceName(absl::string_view name);

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;

  // Allocates `bytes` (> 0) aligned to at least kArenaAlignment, zero-filled.
  virtual absl::StatusOr<void*> Allocate(size_t bytes) = 0;
  // Frees memory from Allocate; nullptr is a no-op.
  virtual void Free(void* ptr) = 0;
  // Sets `bytes` bytes at `ptr` to zero: done on return, or, for device memory that orders its
  // work on a stream, enqueued there (work enqueued on that stream later, and CopyToHost, see it).
  virtual absl::Status Zero(void* ptr, size_t bytes) = 0;
  // Copies `bytes` bytes of this memory at `from` into host memory at `to`, once all work already
  // enqueued on the device has finished (so it reads what the plugin's kernels wrote); the copy is
  // complete on return.
  virtual absl::Status CopyToHost(void* to, const void* from, size_t bytes) = 0;
  // Copies `bytes` bytes of host memory at `from` into this memory at `to`; complete on return,
  // and so seen by any work enqueued afterwards.
  virtual absl::Status CopyFromHost(void* to, const void* from, size_t bytes) = 0;

  // Page-locked host memory (`bytes` > 0) that CopyToHost fills at the device's full copy speed,
  // for a checkpoint's capture (staged_host_copies.h); freed with FreePinnedHost. nullptr where
  // the device has none to offer (host memory is already where a copy lands), an error when it
  // could not be had.
  virtual absl::StatusOr<void*> AllocatePinnedHost(size_t /*bytes*/) { return nullptr; }
  // Frees memory from AllocatePinnedHost; nullptr is a no-op.
  virtual void FreePinnedHost(void* /*ptr*/) {}
};

// Alignment of every arena and of every tensor inside one (a cache line; enough for AVX-512 and
// for CUDA vector loads).
inline constexpr size_t kArenaAlignment = 64;

// Host memory.
class CpuMemory final : public DeviceMemory {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  absl::Status Zero(void* ptr, size_t bytes) override;
  absl::Status CopyToHost(void* to, const void* from, size_t bytes) override;
  absl::Status CopyFromHost(void* to, const void* from, size_t bytes) override;
};

// Picks the DeviceMemory for a device; lets tests and the CUDA module plug in.
class DeviceMemoryProvider {
 public:
  virtual ~DeviceMemoryProvider() = default;
  // The memory for `device`, or an error saying why that device is not available here. The
  // returned pointer stays valid as long as the provider.
  virtual absl::StatusOr<DeviceMemory*> For(cohort_device device) = 0;
};

// Serves the CPU only; a CUDA device is UNAVAILABLE with the device named.
class CpuOnlyMemoryProvider final : public DeviceMemoryProvider {
 public:
  absl::StatusOr<DeviceMemory*> For(cohort_device device) override;

 private:
  CpuMemory cpu_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_DEVICE_MEMORY_H_
