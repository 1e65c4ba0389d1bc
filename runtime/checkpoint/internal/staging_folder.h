// StagingFolder: a temporary name in a storage root, claimed by a held lock, where a checkpoint
// is assembled before it is renamed into place, or where one is moved before it is removed.
//
// For a token T ("<checkpoint id>-<16 random hex digits>") the root holds:
//   .partial-T        the folder, absent until the owner creates or renames something there;
//   .partial-T.lock   a file the owner holds a write lock on for as long as it lives (an open file
//                     description lock, fcntl F_OFD_SETLK: exclusive between threads too, and
//                     honoured across hosts on NFS).
// The lock file is created (and locked) before the folder exists and removed after the folder is
// gone, so a staging folder whose lock file is missing or can be locked has no live owner.
// RemoveAbandonedStagingFolders removes exactly those; a crashed process's lock is released by
// the kernel (or, on NFS, when its lease expires).
//
//   auto staging = StagingFolder::Claim(root, "trial-7-batch-1200");
//   mkdir((*staging)->path().c_str(), 0755);  ... fill it, rename it to its final name ...
//   (*staging)->Discard();   // what is left at path(), then the lock file
//
// Thread-safety: a StagingFolder has one owner. Claims and RemoveAbandonedStagingFolders may run
// concurrently in any number of threads, processes and hosts sharing the root.
#ifndef COHORT_RUNTIME_CHECKPOINT_INTERNAL_STAGING_FOLDER_H_
#define COHORT_RUNTIME_CHECKPOINT_INTERNAL_STAGING_FOLDER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/checkpoint/internal/unique_fd.h"

namespace cohort::checkpoint_internal {

// Every staging entry's name starts with this (checkpoint ids never start with '.').
inline constexpr absl::string_view kStagingPrefix = ".partial-";

class StagingFolder {
 public:
  // Creates and locks a fresh lock file in `root` for a folder named after `id`.
  static absl::StatusOr<std::unique_ptr<StagingFolder>> Claim(const std::string& root,
                                                              absl::string_view id);
  ~StagingFolder();  // Discard(), errors ignored
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  // The folder's path; nothing exists there until the owner puts it there.
  const std::string& path() const { return path_; }

  // Removes whatever is at path(), then the lock file, then releases the lock. Idempotent.
  absl::Status Discard();

 private:
  StagingFolder(std::string path, std::string lock_path, UniqueFd lock)
      : path_(std::move(path)), lock_path_(std::move(lock_path)), lock_(std::move(lock)) {}

  std::string path_;
  std::string lock_path_;
  UniqueFd lock_;
};

// Removes the staging folders in `root` that no live owner holds (see above), with their lock
// files; spares those being written or removed right now.
absl::Status RemoveAbandonedStagingFolders(const std::string& root);

}  // namespace cohort::checkpoint_internal

#endif  // COHORT_RUNTIME_CHECKPOINT_INTERNAL_STAGING_FOLDER_H_
