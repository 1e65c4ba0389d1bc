#include "runtime/module/runtime_module.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {

absl::StatusOr<void*> OpenRuntimeModule(const char* env_var, const std::vector<std::string>& paths,
                                        absl::string_view what) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(env_var); env != nullptr && env[0] != '\0') {
    candidates.push_back(env);
  }
  candidates.insert(candidates.end(), paths.begin(), paths.end());
  std::vector<std::string> failures;
  for (const std::string& path : candidates) {
    if (void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); module != nullptr) {
      return module;
    }
    failures.push_back(::dlerror());
  }
  return absl::UnavailableError(absl::StrCat("this build of Cohort has no usable ", what,
                                             " module (", absl::StrJoin(failures, "; "),
                                             "); was it built where nvcc was found?"));
}

absl::StatusOr<void*> RuntimeModuleSymbol(void* module, const char* symbol,
                                          absl::string_view what) {
  void* address = ::dlsym(module, symbol);
  if (address == nullptr) {
    return absl::InternalError(absl::StrCat("the ", what, " module lacks ", symbol));
  }
  return address;
}

}  // namespace cohort
