// `cohort plugin info|check PLUGIN [options]`: what a model author runs to see whether the runtime
// accepts a plugin and whether its gradients are right, before training with it.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_PLUGIN_COMMAND_H_
#define COHORT_HARNESS_COHORT_COMMANDS_PLUGIN_COMMAND_H_

#include <string>
#include <vector>

namespace cohort {

// args are the words after "plugin". Returns the process exit code: 0 when everything passed,
// 1 when the plugin was refused or a check failed, 2 for a usage error.
int RunPluginCommand(const std::vector<std::string>& args);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_PLUGIN_COMMAND_H_
