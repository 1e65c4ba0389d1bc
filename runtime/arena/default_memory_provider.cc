#include "runtime/arena/default_memory_provider.h"

#include <dlfcn.h>

#include "runtime/arena/cuda/cuda_memory_module.h"
#include "runtime/module/runtime_module.h"

namespace cohort {

DefaultMemoryProvider::~DefaultMemoryProvider() {
  cuda_.clear();  // the objects' code lives in the module: free them before unloading it
  if (module_ != nullptr) ::dlclose(module_);
}

absl::StatusOr<DeviceMemory*> DefaultMemoryProvider::For(cohort_device device) {
  if (absl::Status s = ValidateDevice(device); !s.ok()) return s;
  if (device.kind == COHORT_DEVICE_CPU) return &cpu_;
  return Cuda(device.ordinal);
}

void DefaultMemoryProvider::ZeroOnStream(int ordinal, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  zero_streams_[ordinal] = stream;
}

absl::StatusOr<DeviceMemory*> DefaultMemoryProvider::Cuda(int ordinal) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = cuda_.find(ordinal); it != cuda_.end()) return it->second.get();
  if (module_ == nullptr && module_error_.empty()) {
    absl::StatusOr<void*> module = OpenRuntimeModule(RuntimeModuleId::kCudaMemory);
    if (module.ok()) {
      module_ = *module;
    } else {
      module_error_ = std::string(module.status().message());
    }
  }
  if (module_ == nullptr) return absl::UnavailableError(module_error_);
  absl::StatusOr<void*> symbol =
      RuntimeModuleSymbol(module_, COHORT_CUDA_MEMORY_OPEN_SYMBOL, "CUDA memory");
  if (!symbol.ok()) return symbol.status();
  auto open = reinterpret_cast<cohort_cuda_memory_open_fn>(*symbol);
  char error[512] = {};
  const auto stream = zero_streams_.find(ordinal);
  DeviceMemory* memory =
      open(ordinal, stream != zero_streams_.end() ? stream->second : nullptr, error, sizeof error);
  if (memory == nullptr) return absl::UnavailableError(error);
  cuda_[ordinal].reset(memory);
  return memory;
}

}  // namespace cohort
