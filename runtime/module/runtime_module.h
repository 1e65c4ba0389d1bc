// OpenRuntimeModule: finds and loads one of Cohort's own dlopen modules (the CUDA memory, NCCL and
// CUDA exchange modules), which exist only where the build found nvcc and stay out of the core
// binaries so those run on machines without a CUDA driver.
//
//   absl::StatusOr<void*> handle = OpenRuntimeModule(
//       "COHORT_NCCL_MODULE", {COHORT_NCCL_MODULE_BUILT, COHORT_NCCL_MODULE_INSTALLED}, "NCCL");
//   auto create = reinterpret_cast<Fn>(::dlsym(*handle, "symbol"));
//
// The module is looked for at $<env_var> first (when set), then at each path in order; the first
// that loads wins. Where none loads, UNAVAILABLE names every path tried, with dlerror's reason.
// A loaded module is never unloaded by this function; the caller owns the handle.
//
// Thread-safety: safe to call from any thread (dlopen is).
#ifndef COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_
#define COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// `what` names the module in the error ("NCCL", "CUDA memory").
absl::StatusOr<void*> OpenRuntimeModule(const char* env_var, const std::vector<std::string>& paths,
                                        absl::string_view what);

// The address of `symbol` in `module`; INTERNAL naming the module when it lacks it.
absl::StatusOr<void*> RuntimeModuleSymbol(void* module, const char* symbol, absl::string_view what);

}  // namespace cohort

#endif  // COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_
