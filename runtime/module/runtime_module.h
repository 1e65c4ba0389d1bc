// Cohort's own dlopen modules (the CUDA memory, NCCL, CUDA exchange and CUDA optimizer modules),
// which exist only where the build found nvcc and stay out of the core binaries so those run on
// machines without a CUDA driver.
//
//   absl::StatusOr<void*> create = RuntimeModuleEntry(RuntimeModuleId::kNccl, "symbol");
//
// Every module is listed once, in RuntimeModules(); a new module is added there, and so is
// checked by CheckRuntimeModules (runtime_module_check.h) in every binary that loads modules.
//
// What a module may rely on: its own code, the libraries it links (cudart, NCCL, cuBLAS, Abseil,
// the C++ runtime) and nothing of its host. The executables export no symbols (they are not
// linked with --export-dynamic), so a module that used a runtime class defined in the host
// (a vtable, typeinfo or member function) would fail to load; the modules compile the few
// runtime sources they share with the host into themselves, behind hidden visibility.
//
// Thread-safety: safe to call from any thread (dlopen is).
#ifndef COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_
#define COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

enum class RuntimeModuleId { kCudaMemory, kNccl, kCudaExchange, kCudaOptimizer };

struct RuntimeModule {
  RuntimeModuleId id;     // RuntimeModuleName(id) names it in errors
  std::string env_var;    // overrides where it is looked for: "COHORT_NCCL_MODULE"
  std::string built;      // where this build put it
  std::string installed;  // where `meson install` puts it
};

// "CUDA memory", "NCCL", "CUDA exchange", "CUDA optimizer": how errors name the module.
absl::string_view RuntimeModuleName(RuntimeModuleId id);

// Every module this build made, in load order (the CUDA memory module first); empty where the
// build found no nvcc.
const std::vector<RuntimeModule>& RuntimeModules();

// The module's entry in RuntimeModules(); NOT_FOUND where this build has none.
absl::StatusOr<RuntimeModule> FindRuntimeModule(RuntimeModuleId id);

// Loads the module (RTLD_NOW | RTLD_LOCAL): from $<env_var> first (when set), then from where the
// build put it, then from where `meson install` puts it; the first that loads wins. UNAVAILABLE
// naming every path tried, with dlerror's reason, where none loads (and where this build has no
// such module). A loaded module is never unloaded by this function; the caller owns the handle.
absl::StatusOr<void*> OpenRuntimeModule(RuntimeModuleId id);

// The address of `symbol` in `module`; INTERNAL naming the module when it lacks it.
absl::StatusOr<void*> RuntimeModuleSymbol(void* module, const char* symbol, absl::string_view what);

// The address of `symbol` in module `id`, the module opened by OpenRuntimeModule and never
// unloaded: the entry of a module whose objects run its code for as long as the process lives.
// OpenRuntimeModule's and RuntimeModuleSymbol's errors.
absl::StatusOr<void*> RuntimeModuleEntry(RuntimeModuleId id, const char* symbol);

}  // namespace cohort

#endif  // COHORT_RUNTIME_MODULE_RUNTIME_MODULE_H_
