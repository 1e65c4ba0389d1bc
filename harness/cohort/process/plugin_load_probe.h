// CheckPluginLoadsInChild: opens a plugin in a child process first, so that one that crashes or
// ends its process while it loads (a constructor of its library, its entry point) ends that child
// alone, and the command that would have opened it says how instead of dying with it.
#ifndef COHORT_HARNESS_COHORT_PROCESS_PLUGIN_LOAD_PROBE_H_
#define COHORT_HARNESS_COHORT_PROCESS_PLUGIN_LOAD_PROBE_H_

#include <string>

#include "absl/status/status.h"

namespace cohort {

// OK when the child came back from PluginLibrary::Open(path), whether or not the plugin opened
// (opening it again says why not); FAILED_PRECONDITION otherwise, naming the plugin and how the
// child ended: "plugin '/p/x.so' crashed while it loaded: killed by signal 11 (SIGSEGV: ...)",
// "... ended its process while it loaded (exit code 0): a plugin must not call exit()", or one
// that did not load within kPluginLoadSeconds.
inline constexpr double kPluginLoadSeconds = 60;
absl::Status CheckPluginLoadsInChild(const std::string& path);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_PLUGIN_LOAD_PROBE_H_
