// DefaultMemoryProvider: host memory for the CPU, and CUDA memory through the CUDA memory module
// (loaded on first use; see cuda/cuda_memory_module.h). Where the module or a device is missing,
// a CUDA request fails with UNAVAILABLE and the reason, and CPU tensors are unaffected.
//
// The module is looked up at $COHORT_CUDA_MEMORY_MODULE, then where this build put it, then where
// `meson install` puts it.
//
// Thread-safety: For() may be called from any thread.
#ifndef COHORT_RUNTIME_ARENA_DEFAULT_MEMORY_PROVIDER_H_
#define COHORT_RUNTIME_ARENA_DEFAULT_MEMORY_PROVIDER_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/arena/device_memory.h"

namespace cohort {

class DefaultMemoryProvider final : public DeviceMemoryProvider {
 public:
  DefaultMemoryProvider() = default;
  ~DefaultMemoryProvider() override;
  DefaultMemoryProvider(const DefaultMemoryProvider&) = delete;
  DefaultMemoryProvider& operator=(const DefaultMemoryProvider&) = delete;

  absl::StatusOr<DeviceMemory*> For(cohort_device device) override;

  // CUDA memory on device `ordinal` zeroes (DeviceMemory::Zero, so TensorArena::ZeroGradients) by
  // a memset enqueued on `stream`, a cudaStream_t on that device that outlives this provider (the
  // plugin's compute stream), instead of waiting for the whole device. Call before the first
  // For() of that device.
  void ZeroOnStream(int ordinal, void* stream);

 private:
  absl::StatusOr<DeviceMemory*> Cuda(int ordinal);

  CpuMemory cpu_;
  std::mutex mutex_;
  void* module_ = nullptr;  // dlopen handle of the CUDA memory module
  std::string module_error_;
  std::map<int, std::unique_ptr<DeviceMemory>> cuda_;  // by ordinal
  std::map<int, void*> zero_streams_;                  // by ordinal
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_DEFAULT_MEMORY_PROVIDER_H_
