#include "runtime/agent/task_folders.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cohort {

PrunedTaskFolders PruneEndedTaskFolders(const std::string& work_dir,
                                        const std::set<uint64_t>& running, size_t keep) {
  namespace fs = std::filesystem;
  PrunedTaskFolders pruned;
  const fs::path tasks = fs::path(work_dir) / "tasks";
  std::error_code error;
  if (!fs::is_directory(tasks, error)) return pruned;
  std::vector<uint64_t> ended;
  for (fs::directory_iterator it(tasks, error), end; !error && it != end; it.increment(error)) {
    uint64_t task_id = 0;
    const std::string name = it->path().filename().string();
    if (!absl::SimpleAtoi(name, &task_id) || absl::StrCat(task_id) != name) continue;
    std::error_code ignored;
    if (!it->is_directory(ignored) || running.count(task_id) > 0) continue;
    if (fs::exists(it->path() / "checkpoints", ignored)) continue;
    ended.push_back(task_id);
  }
  if (error) {
    pruned.problems.push_back(absl::StrCat("cannot list ", tasks.string(), ": ", error.message()));
    return pruned;
  }
  if (ended.size() <= keep) return pruned;
  std::sort(ended.begin(), ended.end(), std::greater<>());
  ended.erase(ended.begin(), ended.begin() + static_cast<std::ptrdiff_t>(keep));
  std::sort(ended.begin(), ended.end());
  for (const uint64_t task_id : ended) {
    const fs::path folder = tasks / absl::StrCat(task_id);
    fs::remove_all(folder, error);
    if (error) {
      pruned.problems.push_back(
          absl::StrCat("cannot remove ", folder.string(), ": ", error.message()));
      continue;
    }
    pruned.removed.push_back(task_id);
  }
  return pruned;
}

}  // namespace cohort
