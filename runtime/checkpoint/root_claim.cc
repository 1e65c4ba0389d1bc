#include "runtime/checkpoint/root_claim.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/base/file_io.h"
#include "runtime/checkpoint/internal/posix_io.h"

namespace cohort {
namespace {

using checkpoint_internal::JoinPath;

constexpr char kRemedy[] =
    "give this run a folder of another name (--output) or another "
    "checkpoint_storage.storage_path";

// `run_folder` as a marker names it: "/a/runs/hp/" and "/a/runs/./hp" are "/a/runs/hp".
std::string Normal(const std::string& run_folder) {
  std::filesystem::path path = std::filesystem::path(run_folder).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();
  return path.string();
}

// The run folder the marker in `root` names; empty when there is none or it cannot be read.
std::string ClaimedBy(const std::string& root) {
  absl::StatusOr<std::string> text = ReadWholeFile(JoinPath(root, kCheckpointRootMarker));
  if (!text.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(*text));
}

std::string WouldGoIn(const std::string& root) {
  return absl::StrCat("checkpoint_storage: this run's checkpoints would go in ", root);
}

absl::Status Taken(const std::string& root, const std::string& holder) {
  return absl::FailedPreconditionError(
      absl::StrCat(WouldGoIn(root), ", which holds those of the run in ", holder,
                   " (whose folder has the same name): ", kRemedy));
}

}  // namespace

absl::Status CheckCheckpointRootFree(const std::string& root, const std::string& run_folder) {
  absl::StatusOr<bool> exists = checkpoint_internal::PathExists(root);
  if (!exists.ok()) return exists.status();
  if (!*exists) return absl::OkStatus();
  const std::string holder = ClaimedBy(root);
  if (!holder.empty() && holder != Normal(run_folder)) return Taken(root, holder);
  absl::StatusOr<std::vector<std::string>> names = checkpoint_internal::ListFolder(root);
  if (!names.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        WouldGoIn(root), ", which cannot be read as a folder (", names.status().message(), ")"));
  }
  names->erase(std::remove(names->begin(), names->end(), kCheckpointRootMarker), names->end());
  if (names->empty()) return absl::OkStatus();
  const size_t shown = std::min<size_t>(names->size(), 3);
  const std::string held =
      absl::StrCat(names->size(), names->size() == 1 ? " entry (" : " entries (",
                   absl::StrJoin(names->begin(), names->begin() + shown, ", "),
                   names->size() > shown ? ", ..." : "", ")");
  if (!holder.empty()) {
    // This folder's own claim, from an earlier run in it that has since been removed: a new run
    // would take its checkpoints for its own (and resume from them).
    return absl::FailedPreconditionError(
        absl::StrCat(WouldGoIn(root), ", which holds ", held, " of an earlier run in ", holder,
                     ", whose folder has since been removed: remove them too (rm -r ", root,
                     "), or give this run a folder of another name (--output) or another "
                     "checkpoint_storage.storage_path"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(WouldGoIn(root), ", which already holds ", held,
                   ", another run's whose folder has the same name, or someone else's: ", kRemedy));
}

absl::Status ClaimCheckpointRoot(const std::string& root, const std::string& run_folder,
                                 bool allow_claimed) {
  if (absl::Status made = checkpoint_internal::MakeFolders(root); !made.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint_storage: ", made.message()));
  }
  // Created exclusively: of two runs claiming one folder at once, one gets ALREADY_EXISTS.
  const absl::Status written = checkpoint_internal::WriteFileDurably(
      JoinPath(root, kCheckpointRootMarker), Normal(run_folder) + "\n");
  if (written.ok()) return absl::OkStatus();
  if (!absl::IsAlreadyExists(written)) {
    return absl::FailedPreconditionError(absl::StrCat("checkpoint_storage: ", written.message()));
  }
  const std::string holder = ClaimedBy(root);
  if (allow_claimed || holder == Normal(run_folder)) return absl::OkStatus();
  return Taken(root, holder.empty() ? std::string("another folder") : holder);
}

}  // namespace cohort
