#include "runtime/arena/default_memory_provider.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/cuda/cuda_memory_module.h"

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

absl::StatusOr<DeviceMemory*> DefaultMemoryProvider::Cuda(int ordinal) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = cuda_.find(ordinal); it != cuda_.end()) return it->second.get();
  if (module_ == nullptr && module_error_.empty()) {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("COHORT_CUDA_MEMORY_MODULE")) candidates.push_back(env);
    candidates.push_back(COHORT_CUDA_MEMORY_MODULE_BUILT);
    candidates.push_back(COHORT_CUDA_MEMORY_MODULE_INSTALLED);
    std::vector<std::string> failures;
    for (const std::string& path : candidates) {
      module_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (module_ != nullptr) break;
      failures.push_back(::dlerror());
    }
    if (module_ == nullptr) {
      module_error_ = absl::StrCat("this build of Cohort has no usable CUDA memory module (", absl::StrJoin(failures, "; "),
                                   "); was it built where nvcc was found?");
    }
  }
  if (module_ == nullptr) return absl::UnavailableError(module_error_);
  auto open = reinterpret_cast<cohort_cuda_memory_open_fn>(::dlsym(module_, COHORT_CUDA_MEMORY_OPEN_SYMBOL));
  if (open == nullptr) return absl::InternalError("the CUDA memory module lacks " COHORT_CUDA_MEMORY_OPEN_SYMBOL);
  char error[512] = {};
  DeviceMemory* memory = open(ordinal, error, sizeof error);
  if (memory == nullptr) return absl::UnavailableError(error);
  cuda_[ordinal].reset(memory);
  return memory;
}

}  // namespace cohort
