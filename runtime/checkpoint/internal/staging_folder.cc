#include "runtime/checkpoint/internal/staging_folder.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/internal/posix_io.h"

namespace cohort::checkpoint_internal {
namespace {

constexpr absl::string_view kLockSuffix = ".lock";
constexpr int kClaimAttempts = 8;

uint64_t RandomToken() {
  uint64_t token = 0;
  if (::getrandom(&token, sizeof token, 0) == static_cast<ssize_t>(sizeof token)) return token;
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return static_cast<uint64_t>(now) ^ (static_cast<uint64_t>(::getpid()) << 40);
}

// True when this call took the write lock on `fd` and the file is still in its folder; false
// when another open file holds the lock, or when the file was removed before the lock was taken
// (its remover owned it then).
absl::StatusOr<bool> LockIfLinked(int fd, const std::string& path) {
  struct flock whole_file {};
  whole_file.l_type = F_WRLCK;
  whole_file.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &whole_file) != 0) {
    if (errno == EAGAIN || errno == EACCES) return false;
    return PosixError("lock", path, errno);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) return PosixError("stat", path, errno);
  return info.st_nlink > 0;
}

absl::Status RemoveLockFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return PosixError("remove", path, errno);
  return absl::OkStatus();
}

// Removes the staging folder `folder` and its lock file unless a live owner holds the lock.
absl::Status RemoveIfAbandoned(const std::string& folder, const std::string& lock_path) {
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC));
  if (!lock.valid())
    return errno == ENOENT ? absl::OkStatus() : PosixError("open", lock_path, errno);
  absl::StatusOr<bool> held = LockIfLinked(lock.get(), lock_path);
  if (!held.ok() || !*held) return held.status();  // a live owner, or already discarded
  if (absl::Status removed = RemoveTree(folder); !removed.ok()) return removed;
  return RemoveLockFile(lock_path);
}

}  // namespace

absl::StatusOr<std::unique_ptr<StagingFolder>> StagingFolder::Claim(const std::string& root,
                                                                    absl::string_view id) {
  for (int attempt = 0; attempt < kClaimAttempts; ++attempt) {
    std::string path = JoinPath(
        root, absl::StrCat(kStagingPrefix, id, "-", absl::Hex(RandomToken(), absl::kZeroPad16)));
    std::string lock_path = absl::StrCat(path, kLockSuffix);
    UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!lock.valid()) {
      if (errno == EEXIST) continue;
      return PosixError("create", lock_path, errno);
    }
    absl::StatusOr<bool> held = LockIfLinked(lock.get(), lock_path);
    if (!held.ok()) {
      RemoveLockFile(lock_path).IgnoreError();
      return held.status();
    }
    // A concurrent cleaner took the fresh file for an abandoned one; it removes it.
    if (!*held) continue;
    return std::unique_ptr<StagingFolder>(
        new StagingFolder(std::move(path), std::move(lock_path), std::move(lock)));
  }
  return absl::UnavailableError(absl::StrCat("could not claim a staging folder in ", root,
                                             " after ", kClaimAttempts, " tries"));
}

StagingFolder::~StagingFolder() { Discard().IgnoreError(); }

absl::Status StagingFolder::Discard() {
  if (!lock_.valid()) return absl::OkStatus();
  if (absl::Status removed = RemoveTree(path_); !removed.ok()) return removed;
  if (absl::Status removed = RemoveLockFile(lock_path_); !removed.ok()) return removed;
  lock_.Close();
  return absl::OkStatus();
}

absl::Status RemoveAbandonedStagingFolders(const std::string& root) {
  absl::StatusOr<std::vector<std::string>> names = ListFolder(root);
  if (!names.ok()) return names.status();
  absl::Status first_error;
  for (const std::string& name : *names) {
    if (!absl::StartsWith(name, kStagingPrefix)) continue;
    const std::string path = JoinPath(root, name);
    absl::Status removed;
    if (absl::EndsWith(name, kLockSuffix)) {
      removed = RemoveIfAbandoned(path.substr(0, path.size() - kLockSuffix.size()), path);
    } else {
      // Owners create the lock file first and remove it last: without one, the folder is debris.
      absl::StatusOr<bool> locked = PathExists(absl::StrCat(path, kLockSuffix));
      removed = !locked.ok() ? locked.status() : *locked ? absl::OkStatus() : RemoveTree(path);
    }
    first_error.Update(removed);
  }
  return first_error;
}

}  // namespace cohort::checkpoint_internal
