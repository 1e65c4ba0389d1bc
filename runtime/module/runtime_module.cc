#include "runtime/module/runtime_module.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {

const std::vector<RuntimeModule>& RuntimeModules() {
  static const std::vector<RuntimeModule> modules = {
#ifdef COHORT_CUDA_MEMORY_MODULE_BUILT
      {RuntimeModuleId::kCudaMemory, "COHORT_CUDA_MEMORY_MODULE", COHORT_CUDA_MEMORY_MODULE_BUILT,
       COHORT_CUDA_MEMORY_MODULE_INSTALLED},
      {RuntimeModuleId::kNccl, "COHORT_NCCL_MODULE", COHORT_NCCL_MODULE_BUILT,
       COHORT_NCCL_MODULE_INSTALLED},
      {RuntimeModuleId::kCudaExchange, "COHORT_CUDA_EXCHANGE_MODULE",
       COHORT_CUDA_EXCHANGE_MODULE_BUILT, COHORT_CUDA_EXCHANGE_MODULE_INSTALLED},
      {RuntimeModuleId::kCudaOptimizer, "COHORT_CUDA_OPTIMIZER_MODULE",
       COHORT_CUDA_OPTIMIZER_MODULE_BUILT, COHORT_CUDA_OPTIMIZER_MODULE_INSTALLED},
#endif
  };
  return modules;
}

absl::string_view RuntimeModuleName(RuntimeModuleId id) {
  switch (id) {
    case RuntimeModuleId::kCudaMemory:
      return "CUDA memory";
    case RuntimeModuleId::kNccl:
      return "NCCL";
    case RuntimeModuleId::kCudaExchange:
      return "CUDA exchange";
    case RuntimeModuleId::kCudaOptimizer:
      return "CUDA optimizer";
  }
  return "unknown";
}

absl::StatusOr<RuntimeModule> FindRuntimeModule(RuntimeModuleId id) {
  for (const RuntimeModule& module : RuntimeModules()) {
    if (module.id == id) return module;
  }
  return absl::NotFoundError(absl::StrCat("this build of Cohort has no usable ",
                                          RuntimeModuleName(id),
                                          " module: it was built where nvcc was not found"));
}

namespace {

// dlerror's text, with the C++ name of an undefined symbol added ("undefined symbol:
// _ZTIN6cohort13BucketReducerE" gains "(typeinfo for cohort::BucketReducer)").
std::string ExplainDlerror(const char* error) {
  std::string text = error != nullptr ? error : "unknown dlopen error";
  constexpr std::string_view kUndefined = "undefined symbol: ";
  const size_t at = text.find(kUndefined);
  if (at == std::string::npos) return text;
  std::string symbol = text.substr(at + kUndefined.size());
  symbol = symbol.substr(0, symbol.find_first_of(" ,\t"));
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  if (status == 0 && demangled != nullptr) absl::StrAppend(&text, " (", demangled.get(), ")");
  return text;
}

}  // namespace

absl::StatusOr<void*> OpenRuntimeModule(RuntimeModuleId id) {
  absl::StatusOr<RuntimeModule> module = FindRuntimeModule(id);
  if (!module.ok()) return absl::UnavailableError(module.status().message());
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(module->env_var.c_str()); env != nullptr && env[0] != '\0') {
    candidates.push_back(env);
  }
  candidates.push_back(module->built);
  candidates.push_back(module->installed);
  std::vector<std::string> failures;
  for (const std::string& path : candidates) {
    if (void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); handle != nullptr) {
      return handle;
    }
    failures.push_back(ExplainDlerror(::dlerror()));
  }
  return absl::UnavailableError(
      absl::StrCat("this build of Cohort has no usable ", RuntimeModuleName(id), " module (",
                   absl::StrJoin(failures, "; "), "); was it built where nvcc was found?"));
}

absl::StatusOr<void*> RuntimeModuleSymbol(void* module, const char* symbol,
                                          absl::string_view what) {
  void* address = ::dlsym(module, symbol);
  if (address == nullptr) {
    return absl::InternalError(absl::StrCat("the ", what, " module lacks ", symbol));
  }
  return address;
}

absl::StatusOr<void*> RuntimeModuleEntry(RuntimeModuleId id, const char* symbol) {
  // dlopen counts its opens; the handle is never closed, so the module stays loaded.
  absl::StatusOr<void*> module = OpenRuntimeModule(id);
  if (!module.ok()) return module.status();
  return RuntimeModuleSymbol(*module, symbol, RuntimeModuleName(id));
}

}  // namespace cohort
