#include "runtime/collective/nccl_loader.h"

#include "absl/strings/str_cat.h"
#include "runtime/collective/nccl/nccl_module.h"
#include "runtime/module/runtime_module.h"

namespace cohort {
namespace {

// The module's factory, loaded once per process; the module is never unloaded because backends
// (and NCCL's own threads) run its code.
absl::StatusOr<cohort_nccl_backend_create_fn> LoadFactory() {
  static const absl::StatusOr<void*> factory =
      RuntimeModuleEntry(RuntimeModuleId::kNccl, COHORT_NCCL_BACKEND_CREATE_SYMBOL);
  if (!factory.ok()) return factory.status();
  return reinterpret_cast<cohort_nccl_backend_create_fn>(*factory);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CollectiveBackend>> CreateNcclBackend(uint32_t rank, uint32_t size,
                                                                     RendezvousStore& store,
                                                                     const NcclOptions& options) {
  if (size == 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("nccl: rank ", rank, " does not fit a group of size ", size));
  }
  if (options.timeout.count() <= 0)
    return absl::InvalidArgumentError("nccl: the timeout must be positive");
  absl::StatusOr<cohort_nccl_backend_create_fn> create = LoadFactory();
  if (!create.ok()) return create.status();
  int code = static_cast<int>(absl::StatusCode::kUnknown);
  char error[1024] = {};
  CollectiveBackend* backend =
      (*create)(rank, size, &store, options.prefix.c_str(), options.device, options.stream,
                options.timeout.count(), &code, error, sizeof error);
  if (backend == nullptr) return absl::Status(static_cast<absl::StatusCode>(code), error);
  return std::unique_ptr<CollectiveBackend>(backend);
}

}  // namespace cohort
