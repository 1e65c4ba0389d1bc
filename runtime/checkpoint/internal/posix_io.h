// Small POSIX file-system helpers for the shared_fs checkpoint store. Every error is a Status
// whose message names the operation, the path and strerror's text, with the code errno maps to
// (ENOENT -> NOT_FOUND, EEXIST -> ALREADY_EXISTS, EACCES -> PERMISSION_DENIED, ...):
//
//   absl::Status written = WriteFileDurably("/ckpt/.partial-x/parameters", bytes);
//   // NOT_FOUND: create /ckpt/.partial-x/parameters: No such file or directory
//
// Interrupted system calls are retried. Functions keep no state: safe from any thread.
#ifndef COHORT_RUNTIME_CHECKPOINT_INTERNAL_POSIX_IO_H_
#define COHORT_RUNTIME_CHECKPOINT_INTERNAL_POSIX_IO_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort::checkpoint_internal {

// "<operation> <path>: <strerror(error_number)>" with the code of error_number.
absl::Status PosixError(absl::string_view operation, absl::string_view path, int error_number);

std::string JoinPath(absl::string_view folder, absl::string_view name);

// Creates `path` (which must not exist), writes `bytes`, fsyncs and closes it.
absl::Status WriteFileDurably(const std::string& path, absl::string_view bytes);

// Creates `to` (which must not exist) with the bytes of the file at `from`, read and written in
// pieces of kCopyPieceBytes (the memory the copy needs), each piece handed to `passed` before it
// is written (an error from it stops the copy); fsyncs and closes `to`. Returns the bytes copied.
inline constexpr size_t kCopyPieceBytes = 4 << 20;
absl::StatusOr<uint64_t> CopyFileDurably(
    const std::string& from, const std::string& to,
    const std::function<absl::Status(absl::string_view piece)>& passed);

// The size of the regular file at `path`; FAILED_PRECONDITION if it is not a regular file.
absl::StatusOr<uint64_t> RegularFileSize(const std::string& path);

// Whether anything (a file, folder or link) exists at `path`.
absl::StatusOr<bool> PathExists(const std::string& path);

// Flushes a folder's entries (created, renamed or removed names) to stable storage.
absl::Status SyncFolder(const std::string& path);

// Creates `path` and its missing parents; OK if it is already a folder.
absl::Status MakeFolders(const std::string& path);

// The names in a folder except "." and "..", sorted.
absl::StatusOr<std::vector<std::string>> ListFolder(const std::string& path);

// Removes `path` and, if it is a folder, everything under it; symbolic links are removed, never
// followed. OK if nothing is at `path`.
absl::Status RemoveTree(const std::string& path);

}  // namespace cohort::checkpoint_internal

#endif  // COHORT_RUNTIME_CHECKPOINT_INTERNAL_POSIX_IO_H_
