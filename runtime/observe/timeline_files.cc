#include "runtime/observe/timeline_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

std::filesystem::path TimelineFolder(const std::string& checkpoint_root) {
  return std::filesystem::path(checkpoint_root) / ".timelines";
}

std::string TrialPrefix(uint64_t trial_id) { return absl::StrCat("trial", trial_id, "-attempt"); }

}  // namespace

absl::StatusOr<std::string> RankTimelinePath(const std::string& checkpoint_root, uint64_t trial_id,
                                             uint32_t attempt, uint32_t rank,
                                             uint64_t started_unix_ms) {
  const std::filesystem::path folder = TimelineFolder(checkpoint_root);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the timeline folder ", folder.string(), ": ", error.message()));
  }
  return (folder / absl::StrCat(TrialPrefix(trial_id), attempt, "-rank", rank, "-", started_unix_ms,
                                ".json"))
      .string();
}

std::vector<std::string> TrialTimelinePaths(const std::string& checkpoint_root, uint64_t trial_id) {
  const std::string prefix = TrialPrefix(trial_id);
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(TimelineFolder(checkpoint_root), error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, prefix) && absl::EndsWith(name, ".json")) {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace cohort
