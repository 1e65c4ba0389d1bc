#include "runtime/observe/flight_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cohort {
namespace {

std::filesystem::path FlightFolder(const std::string& checkpoint_root) {
  return std::filesystem::path(checkpoint_root) / ".flight";
}

std::string FlightTrialPrefix(uint64_t trial_id) {
  return absl::StrCat("trial", trial_id, "-task");
}

// The files of `trial_id` in the folder, by name.
std::vector<std::string> TrialFlightNames(const std::string& checkpoint_root, uint64_t trial_id) {
  const std::string prefix = FlightTrialPrefix(trial_id);
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(FlightFolder(checkpoint_root), error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, prefix) && absl::EndsWith(name, ".flight")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

absl::StatusOr<std::string> RankFlightPath(const std::string& checkpoint_root, uint64_t trial_id,
                                           uint64_t task_id, uint32_t rank) {
  const std::filesystem::path folder = FlightFolder(checkpoint_root);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot create the flight record folder ",
                                               folder.string(), ": ", error.message()));
  }
  return (folder / absl::StrCat(FlightTrialPrefix(trial_id), task_id, "-rank", rank, ".flight"))
      .string();
}

std::vector<std::string> TaskFlightPaths(const std::string& checkpoint_root, uint64_t trial_id,
                                         uint64_t task_id) {
  const std::string prefix = absl::StrCat(FlightTrialPrefix(trial_id), task_id, "-rank");
  std::vector<std::string> paths;
  for (const std::string& name : TrialFlightNames(checkpoint_root, trial_id)) {
    if (absl::StartsWith(name, prefix)) {
      paths.push_back((FlightFolder(checkpoint_root) / name).string());
    }
  }
  return paths;
}

std::optional<uint64_t> LatestFlightTask(const std::string& checkpoint_root, uint64_t trial_id) {
  const size_t skip = FlightTrialPrefix(trial_id).size();
  std::optional<uint64_t> latest;
  for (const std::string& name : TrialFlightNames(checkpoint_root, trial_id)) {
    absl::string_view rest = absl::string_view(name).substr(skip);
    uint64_t task = 0;
    if (absl::SimpleAtoi(rest.substr(0, rest.find('-')), &task)) {
      latest = std::max(latest.value_or(0), task);
    }
  }
  return latest;
}

void RemoveTaskFlights(const std::string& checkpoint_root, uint64_t trial_id, uint64_t task_id) {
  for (const std::string& path : TaskFlightPaths(checkpoint_root, trial_id, task_id)) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
}

}  // namespace cohort
