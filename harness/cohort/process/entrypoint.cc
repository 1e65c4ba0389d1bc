#include "harness/cohort/process/entrypoint.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cohort {

std::vector<std::string> PluginFolders() {
  std::vector<std::string> folders;
  if (const char* search = std::getenv("COHORT_PLUGIN_PATH")) {
    for (absl::string_view dir : absl::StrSplit(search, ':', absl::SkipEmpty())) {
      folders.emplace_back(dir);
    }
  }
  folders.push_back(COHORT_BUILD_PLUGIN_DIR);
  folders.push_back(COHORT_INSTALLED_PLUGIN_DIR);
  return folders;
}

bool NamesPluginByPath(const std::string& entrypoint) {
  return absl::StrContains(entrypoint, '/') || absl::EndsWith(entrypoint, ".so");
}

bool NamesPluginByRelativePath(const std::string& entrypoint) {
  return NamesPluginByPath(entrypoint) && std::filesystem::path(entrypoint).is_relative();
}

absl::StatusOr<std::string> ResolveEntrypoint(const std::string& entrypoint,
                                              const std::string& config_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (NamesPluginByPath(entrypoint)) {
    fs::path path(entrypoint);
    if (path.is_relative() && !config_dir.empty()) path = fs::path(config_dir) / path;
    candidates.push_back(path.lexically_normal().string());
  } else {
    for (const std::string& folder : PluginFolders()) {
      candidates.push_back(folder == COHORT_BUILD_PLUGIN_DIR
                               ? absl::StrCat(folder, "/", entrypoint, "/", entrypoint, ".so")
                               : absl::StrCat(folder, "/", entrypoint, ".so"));
    }
  }
  for (const std::string& candidate : candidates) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      return fs::absolute(candidate, error).lexically_normal().string();
    }
    if (fs::is_directory(candidate, error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("entrypoint: ", candidate, " is a folder, not a plugin (a .so file)"));
    }
  }
  return absl::NotFoundError(absl::StrCat("entrypoint: no plugin '", entrypoint, "'; looked for ",
                                          absl::StrJoin(candidates, ", ")));
}

}  // namespace cohort
