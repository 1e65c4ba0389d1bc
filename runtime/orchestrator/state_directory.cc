#include "runtime/orchestrator/state_directory.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/file_io.h"
#include "runtime/record/experiment_record_reader.h"

namespace cohort {
namespace {

// The numeric names in `folder` (its experiments' or trials' ids), ascending; none when missing.
std::vector<uint64_t> NumericNames(const std::filesystem::path& folder) {
  std::vector<uint64_t> ids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    uint64_t id = 0;
    if (absl::SimpleAtoi(entry.path().filename().string(), &id)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The largest id among them (0 when none).
uint64_t LargestNumericName(const std::filesystem::path& folder) {
  const std::vector<uint64_t> ids = NumericNames(folder);
  return ids.empty() ? 0 : ids.back();
}

// The file's modification time in Unix seconds, 0 when it cannot be read.
double ModifiedUnix(const std::string& path) {
  struct stat info = {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<double>(info.st_mtime) : 0;
}

// The id stored in file `name` under `root`, 0 when there is none.
uint64_t StoredId(const std::string& root, const char* name) {
  uint64_t stored = 0;
  absl::StatusOr<std::string> text = ReadWholeFile(absl::StrCat(root, "/", name));
  if (text.ok() && absl::SimpleAtoi(*text, &stored)) return stored;
  return 0;
}

}  // namespace

std::string StateDirectory::ExperimentPath(uint64_t id) const {
  return absl::StrCat(root_, "/experiments/", id);
}

uint64_t StateDirectory::FirstFreeExperimentId() const {
  return std::max(LargestNumericName(std::filesystem::path(root_) / "experiments") + 1,
                  StoredId(root_, "next_experiment_id"));
}

uint64_t StateDirectory::FirstFreeTrialId() const {
  const std::filesystem::path experiments = std::filesystem::path(root_) / "experiments";
  uint64_t first_free = std::max<uint64_t>(1, StoredId(root_, "next_trial_id"));
  for (const uint64_t id : NumericNames(experiments)) {
    first_free =
        std::max(first_free, LargestNumericName(experiments / absl::StrCat(id) / "trials") + 1);
  }
  return first_free;
}

uint64_t StateDirectory::FirstFreeTaskId() const {
  return std::max<uint64_t>(StoredId(root_, "next_task_id"), 1);
}

absl::Status StateDirectory::StoreFirstFreeTaskId(uint64_t next) const {
  return WriteFileAtomically(root_ + "/next_task_id", absl::StrCat(next));
}

absl::Status StateDirectory::RemoveExperiment(uint64_t id, uint64_t next_experiment,
                                              uint64_t next_trial) const {
  if (absl::Status kept =
          WriteFileAtomically(root_ + "/next_experiment_id", absl::StrCat(next_experiment));
      !kept.ok()) {
    return kept;
  }
  if (absl::Status kept = WriteFileAtomically(root_ + "/next_trial_id", absl::StrCat(next_trial));
      !kept.ok()) {
    return kept;
  }
  const std::string path = ExperimentPath(id);
  const std::string doomed = absl::StrCat(root_, "/experiments/.deleted-", id);
  std::error_code error;
  std::filesystem::remove_all(doomed, error);  // an earlier attempt's leftover
  std::filesystem::rename(path, doomed, error);
  if (error)
    return absl::InternalError(absl::StrCat("cannot remove ", path, ": ", error.message()));
  std::filesystem::remove_all(doomed, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot remove ", doomed, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> StateDirectory::FinishInterruptedDeletes() const {
  std::vector<std::string> leftovers;
  std::error_code error;
  const std::filesystem::path experiments = std::filesystem::path(root_) / "experiments";
  if (!std::filesystem::is_directory(experiments, error)) return leftovers;
  // Listed first, removed after: a folder is not changed under its own listing.
  for (std::filesystem::directory_iterator it(experiments, error), end; !error && it != end;
       it.increment(error)) {
    if (absl::StartsWith(it->path().filename().string(), ".deleted-")) {
      leftovers.push_back(it->path().string());
    }
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot list ", experiments.string(), ": ", error.message()));
  }
  for (const std::string& leftover : leftovers) {
    std::filesystem::remove_all(leftover, error);
    if (error) {
      return absl::InternalError(absl::StrCat("cannot remove ", leftover, ": ", error.message()));
    }
  }
  return leftovers;
}

std::vector<absl::StatusOr<StoredExperiment>> StateDirectory::ReadExperiments() const {
  std::vector<absl::StatusOr<StoredExperiment>> experiments;
  for (const uint64_t id : NumericNames(std::filesystem::path(root_) / "experiments")) {
    const std::string path = ExperimentPath(id);
    auto unloadable = [&](absl::string_view why) {
      return absl::FailedPreconditionError(
          absl::StrCat("experiment ", id, " in ", path, " is not loaded: ", why));
    };
    absl::StatusOr<RunFolder> folder = RunFolder::Open(path);
    if (!folder.ok()) {
      experiments.push_back(unloadable(folder.status().message()));
      continue;
    }
    absl::StatusOr<ExperimentRecord> record = ReadExperimentRecord(folder->experiment_json_path());
    absl::StatusOr<std::string> yaml = ReadWholeFile(folder->config_path());
    absl::StatusOr<ExperimentConfig> config =
        yaml.ok() ? ParseExperimentConfig(*yaml) : absl::StatusOr<ExperimentConfig>(yaml.status());
    if (!record.ok() || !config.ok()) {
      experiments.push_back(
          unloadable(!record.ok() ? record.status().message() : config.status().message()));
      continue;
    }
    const double submitted = ModifiedUnix(folder->config_path());
    const double saved = ModifiedUnix(folder->experiment_json_path());
    experiments.push_back(StoredExperiment{id, *std::move(folder), *std::move(config),
                                           *std::move(record), submitted, saved});
  }
  return experiments;
}

RunState RunStateOf(TrialState state) {
  switch (state) {
    case TrialState::kCompleted:
      return RunState::kCompleted;
    case TrialState::kStopped:
      return RunState::kStopped;
    case TrialState::kError:
      return RunState::kError;
    default:
      break;
  }
  return RunState::kActive;
}

RunState RunStateOf(ExperimentState state) {
  switch (state) {
    case ExperimentState::kCompleted:
      return RunState::kCompleted;
    case ExperimentState::kStopped:
      return RunState::kStopped;
    case ExperimentState::kError:
      return RunState::kError;
    case ExperimentState::kPaused:
      return RunState::kPaused;
    default:
      break;
  }
  return RunState::kActive;
}

}  // namespace cohort
