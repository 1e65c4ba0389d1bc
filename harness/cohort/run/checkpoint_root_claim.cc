#include "harness/cohort/run/checkpoint_root_claim.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/base/file_io.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;

constexpr char kRemedy[] =
    "give this run a folder of another name (--output) or another "
    "checkpoint_storage.storage_path";

// `run_folder` as a marker names it: "/a/runs/hp/" and "/a/runs/./hp" are "/a/runs/hp".
std::string Normal(const std::string& run_folder) {
  fs::path path = fs::path(run_folder).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();
  return path.string();
}

// The run folder the marker in `root` names; empty when there is none or it cannot be read.
std::string ClaimedBy(const std::string& root) {
  absl::StatusOr<std::string> text =
      ReadWholeFile((fs::path(root) / kCheckpointRootMarker).string());
  if (!text.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(*text));
}

absl::Status Taken(const std::string& root, const std::string& holder) {
  return absl::FailedPreconditionError(
      absl::StrCat("checkpoint_storage: this run's checkpoints would go in ", root,
                   ", which holds those of the run in ", holder,
                   " (whose folder has the same name): ", kRemedy));
}

}  // namespace

absl::Status CheckCheckpointRootFree(const std::string& root, const std::string& run_folder) {
  std::error_code error;
  if (!fs::exists(root, error)) return absl::OkStatus();
  if (const std::string holder = ClaimedBy(root); !holder.empty()) {
    return holder == Normal(run_folder) ? absl::OkStatus() : Taken(root, holder);
  }
  std::vector<std::string> names;
  for (auto it = fs::directory_iterator(root, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("checkpoint_storage: this run's checkpoints would go in ", root,
                     ", which cannot be read as a folder (", error.message(), ")"));
  }
  if (names.empty()) return absl::OkStatus();
  std::sort(names.begin(), names.end());
  const size_t shown = std::min<size_t>(names.size(), 3);
  return absl::FailedPreconditionError(absl::StrCat(
      "checkpoint_storage: this run's checkpoints would go in ", root, ", which already holds ",
      names.size(), " entries (", absl::StrJoin(names.begin(), names.begin() + shown, ", "),
      names.size() > shown ? ", ..." : "",
      "), another run's whose folder has the same name, or someone else's: ", kRemedy));
}

absl::Status ClaimCheckpointRoot(const std::string& root, const std::string& run_folder,
                                 bool allow_claimed) {
  std::error_code error;
  fs::create_directories(root, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("checkpoint_storage: cannot make ", root, ": ", error.message()));
  }
  const std::string marker = (fs::path(root) / kCheckpointRootMarker).string();
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint_storage: cannot write ", marker, ": ", std::strerror(errno)));
    }
    const std::string holder = ClaimedBy(root);
    if (allow_claimed || holder == Normal(run_folder)) return absl::OkStatus();
    return Taken(root, holder.empty() ? std::string("another folder") : holder);
  }
  const std::string text = Normal(run_folder) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint_storage: cannot write ", marker));
  }
  return absl::OkStatus();
}

}  // namespace cohort
