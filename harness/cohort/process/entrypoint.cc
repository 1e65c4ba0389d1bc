#include "harness/cohort/process/entrypoint.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/cohort/process/this_process.h"

namespace cohort {
namespace {

// The plugins folder of the build tree this binary runs from (<build>/plugins, beside
// <build>/harness/cohort/cohort, holding <name>/<name>.so): a copied or moved build finds its own
// plugins, not those of the folder it was built in. Empty for a binary elsewhere (installed).
std::string BuildTreePluginFolder() {
  namespace fs = std::filesystem;
  absl::StatusOr<std::string> self = SelfExecutable();
  if (!self.ok()) return "";
  const fs::path folder = fs::path(*self).parent_path();
  if (folder.filename() != "cohort" || folder.parent_path().filename() != "harness") return "";
  return (folder.parent_path().parent_path() / "plugins").string();
}

// Whether `entrypoint` reads as Determined's: a Python class (model_def:MNistTrial), a script or a
// launcher command (python3 -m determined.launch.torch_distributed python3 train.py).
bool ReadsAsPythonEntrypoint(const std::string& entrypoint) {
  return absl::StrContains(entrypoint, ':') || absl::StrContains(entrypoint, ' ') ||
         absl::EndsWith(entrypoint, ".py");
}

}  // namespace

std::vector<std::string> PluginFolders() {
  std::vector<std::string> folders;
  if (const char* search = std::getenv("COHORT_PLUGIN_PATH")) {
    for (absl::string_view dir : absl::StrSplit(search, ':', absl::SkipEmpty())) {
      folders.emplace_back(dir);
    }
  }
  if (std::string build = BuildTreePluginFolder(); !build.empty()) folders.push_back(build);
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
    const std::string build = BuildTreePluginFolder();
    for (const std::string& folder : PluginFolders()) {
      candidates.push_back(!build.empty() && folder == build
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
  return absl::NotFoundError(absl::StrCat(
      "entrypoint: no plugin '", entrypoint, "'; looked for ", absl::StrJoin(candidates, ", "),
      NamesPluginByPath(entrypoint)
          ? ""
          : " (a plugin given by name is looked for in $COHORT_PLUGIN_PATH's folders first; give "
            "its path, or add its folder there)",
      ReadsAsPythonEntrypoint(entrypoint)
          ? ". Python entrypoints (a Trial class as module:Class, a script or a launcher command) "
            "do not run in Cohort: a model is a plugin, a shared library built against the SDK "
            "(docs/sdk.md), named by its plugin name or its .so file"
          : ""));
}

}  // namespace cohort
