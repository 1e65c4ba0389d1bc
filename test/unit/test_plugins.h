// Paths of the plugins built for tests (plugins/test, plugins/mlp, plugins/linreg).
#ifndef COHORT_TEST_UNIT_TEST_PLUGINS_H_
#define COHORT_TEST_UNIT_TEST_PLUGINS_H_

#include <string>

namespace cohort::testing {

// COHORT_TEST_PLUGIN_DIR is the build folder's plugins/ (set by test/unit/meson.build).
inline std::string PluginPath(const std::string& relative) {
  return std::string(COHORT_TEST_PLUGIN_DIR) + "/" + relative;
}
inline std::string DefectivePlugin(const std::string& defect) {
  return PluginPath("test/defect_" + defect + ".so");
}

}  // namespace cohort::testing

#endif  // COHORT_TEST_UNIT_TEST_PLUGINS_H_
