#include "runtime/exchange/device_exchange.h"

#include "runtime/exchange/cuda/cuda_exchange_module.h"
#include "runtime/module/runtime_module.h"

namespace cohort {
namespace {

// The module's entry point, loaded once per process; the module stays loaded because the objects
// it makes run its code.
absl::StatusOr<cohort_cuda_exchange_open_fn> LoadEntry() {
  static const absl::StatusOr<void*> entry =
      RuntimeModuleEntry(RuntimeModuleId::kCudaExchange, COHORT_CUDA_EXCHANGE_OPEN_SYMBOL);
  if (!entry.ok()) return entry.status();
  return reinterpret_cast<cohort_cuda_exchange_open_fn>(*entry);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceExchange>> OpenCudaExchange(int device) {
  absl::StatusOr<cohort_cuda_exchange_open_fn> open = LoadEntry();
  if (!open.ok()) return open.status();
  char error[1024] = {};
  DeviceExchange* exchange = (*open)(device, error, sizeof error);
  if (exchange == nullptr) return absl::UnavailableError(error);
  return std::unique_ptr<DeviceExchange>(exchange);
}

}  // namespace cohort
