// The runtime module probe: a library to LD_PRELOAD into any Cohort binary. With
// COHORT_RUNTIME_MODULE_PROBE=1 in the environment it loads every runtime module into that binary,
// as the binary would (CheckRuntimeModules, RTLD_NOW), before the binary's main() runs; prints
// one line per module and exits 0 when all load, 1 otherwise. Without the variable it does
// nothing. So a module that relies on a symbol its host does not export fails here, on any
// machine, naming the symbol.
//
// Everything of the probe's own is hidden: it adds no symbol a module could bind to. (The Abseil
// and C++ libraries it links are ones the binaries link too.)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/module/runtime_module_check.h"

namespace {

__attribute__((constructor)) void ProbeRuntimeModules() {
  const char* wanted = std::getenv("COHORT_RUNTIME_MODULE_PROBE");
  if (wanted == nullptr || std::strcmp(wanted, "1") != 0) return;
  const std::vector<cohort::RuntimeModuleLoad> loads = cohort::CheckRuntimeModules();
  bool all_loaded = true;
  for (const cohort::RuntimeModuleLoad& load : loads) {
    std::printf("%s\n", cohort::FormatRuntimeModuleLoad(load).c_str());
    all_loaded = all_loaded && load.status.ok();
  }
  if (loads.empty()) std::printf("this build has no runtime modules (no nvcc)\n");
  std::fflush(stdout);
  ::_exit(all_loaded ? 0 : 1);
}

}  // namespace
