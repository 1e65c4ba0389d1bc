// ResolveEntrypoint: the plugin file an experiment's `entrypoint` names.
//
// A value with a '/' or ending in ".so" is a path; a relative one is taken from the config
// file's folder (as Determined takes an entrypoint from the context directory). Any other value
// is a plugin name, looked up as <name>.so in each folder of $COHORT_PLUGIN_PATH (colon-separated),
// then as <name>/<name>.so in the plugins folder of the build tree the running binary is in (a
// copied build finds its own), then as <name>.so in the installed plugin folder. NOT_FOUND lists
// every place it looked.
#ifndef COHORT_HARNESS_COHORT_PROCESS_ENTRYPOINT_H_
#define COHORT_HARNESS_COHORT_PROCESS_ENTRYPOINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

absl::StatusOr<std::string> ResolveEntrypoint(const std::string& entrypoint,
                                              const std::string& config_dir);

// Whether `entrypoint` names its plugin by a path (it holds a '/' or ends in ".so") rather than by
// a plugin name.
bool NamesPluginByPath(const std::string& entrypoint);

// Whether `entrypoint` names its plugin by a relative path (which only the config file's folder
// gives a meaning), rather than by an absolute path or a plugin name.
bool NamesPluginByRelativePath(const std::string& entrypoint);

// The folders a plugin name is looked up in, in order: $COHORT_PLUGIN_PATH's, the running
// binary's build tree's plugins folder (which holds <name>/<name>.so; none for a binary outside a
// build tree), the installed plugin folder.
std::vector<std::string> PluginFolders();

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_ENTRYPOINT_H_
