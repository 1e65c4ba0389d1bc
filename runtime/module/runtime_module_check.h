// CheckRuntimeModules: loads every module of RuntimeModules() into this process exactly as the
// runtime does when it needs one (OpenRuntimeModule: RTLD_NOW, so every symbol is bound at once),
// and says for each where it came from or why it does not load, naming a missing symbol in its
// C++ form. `cohort doctor` runs it in the cohort binary; the module probe (test/module) runs it
// inside every other binary that loads modules, before that binary's main().
//
//   for (const RuntimeModuleLoad& load : CheckRuntimeModules())
//     std::cout << FormatRuntimeModuleLoad(load) << "\n";
//
// Thread-safety: safe to call from any thread; the modules stay loaded.
#ifndef COHORT_RUNTIME_MODULE_RUNTIME_MODULE_CHECK_H_
#define COHORT_RUNTIME_MODULE_RUNTIME_MODULE_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/module/runtime_module.h"

namespace cohort {

struct RuntimeModuleLoad {
  RuntimeModule module;
  std::string path;     // the file it loaded from; empty when it did not load
  absl::Status status;  // why it did not load
};

// One entry per module of RuntimeModules(), in its order.
std::vector<RuntimeModuleLoad> CheckRuntimeModules();

// "NCCL module: loaded from /usr/lib/cohort/cohort_nccl_collective.so", or
// "CUDA exchange module: does not load: ...".
std::string FormatRuntimeModuleLoad(const RuntimeModuleLoad& load);

}  // namespace cohort

#endif  // COHORT_RUNTIME_MODULE_RUNTIME_MODULE_CHECK_H_
