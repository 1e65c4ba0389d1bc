#include "runtime/module/runtime_module_check.h"

#include <dlfcn.h>
#include <link.h>

#include "absl/strings/str_cat.h"

namespace cohort {

std::vector<RuntimeModuleLoad> CheckRuntimeModules() {
  std::vector<RuntimeModuleLoad> loads;
  for (const RuntimeModule& module : RuntimeModules()) {
    RuntimeModuleLoad load{module, "", absl::OkStatus()};
    absl::StatusOr<void*> handle = OpenRuntimeModule(module.id);
    if (!handle.ok()) {
      load.status = handle.status();
    } else if (link_map* map = nullptr; ::dlinfo(*handle, RTLD_DI_LINKMAP, &map) == 0 &&
                                        map != nullptr && map->l_name != nullptr) {
      load.path = map->l_name;
    } else {
      load.path = "(unknown path)";
    }
    loads.push_back(std::move(load));
  }
  return loads;
}

std::string FormatRuntimeModuleLoad(const RuntimeModuleLoad& load) {
  if (!load.status.ok()) {
    return absl::StrCat(RuntimeModuleName(load.module.id),
                        " module: does not load: ", load.status.message());
  }
  return absl::StrCat(RuntimeModuleName(load.module.id), " module: loaded from ", load.path);
}

}  // namespace cohort
