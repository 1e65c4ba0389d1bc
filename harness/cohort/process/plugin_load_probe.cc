#include "harness/cohort/process/plugin_load_probe.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "harness/cohort/process/child_process.h"
#include "runtime/plugin/plugin_library.h"

namespace cohort {

absl::Status CheckPluginLoadsInChild(const std::string& path) {
  absl::StatusOr<ChildExit> exit = RunInChild(
      [&path] {
        (void)PluginLibrary::Open(path);
        return 0;
      },
      kPluginLoadSeconds);
  if (!exit.ok()) return exit.status();
  if (exit->body_returned) return absl::OkStatus();
  const std::string plugin = absl::StrCat("plugin '", path, "' ");
  if (exit->timed_out) {
    return absl::FailedPreconditionError(
        absl::StrCat(plugin, "did not load within ", kPluginLoadSeconds,
                     " s (its library's constructors or its entry point hang)"));
  }
  if (exit->signaled) {
    return absl::FailedPreconditionError(
        absl::StrCat(plugin, "crashed while it loaded: ", exit->Describe(),
                     " (in its library's constructors or its entry point)"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(plugin, "ended its process while it loaded (", exit->Describe(),
                   "): a plugin must not call exit()"));
}

}  // namespace cohort
