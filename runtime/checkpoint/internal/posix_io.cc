#include "runtime/checkpoint/internal/posix_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/internal/unique_fd.h"

namespace cohort::checkpoint_internal {
namespace {

// Runs a system call until it is not interrupted by a signal.
template <class Call>
auto RetryOnInterrupt(Call call) {
  decltype(call()) result;
  do {
    result = call();
  } while (result < 0 && errno == EINTR);
  return result;
}

absl::Status NotARegularFile(absl::string_view path) {
  return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
}

struct FolderCloser {
  void operator()(DIR* folder) const { closedir(folder); }
};

}  // namespace

absl::Status PosixError(absl::string_view operation, absl::string_view path, int error_number) {
  return absl::ErrnoToStatus(error_number, absl::StrCat(operation, " ", path));
}

std::string JoinPath(absl::string_view folder, absl::string_view name) {
  if (!folder.empty() && folder.back() == '/') return absl::StrCat(folder, name);
  return absl::StrCat(folder, "/", name);
}

absl::Status WriteFileDurably(const std::string& path, absl::string_view bytes) {
  UniqueFd fd(RetryOnInterrupt(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }));
  if (!fd.valid()) return PosixError("create", path, errno);
  while (!bytes.empty()) {
    const ssize_t written =
        RetryOnInterrupt([&] { return ::write(fd.get(), bytes.data(), bytes.size()); });
    if (written < 0) return PosixError("write", path, errno);
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  if (RetryOnInterrupt([&] { return ::fsync(fd.get()); }) != 0)
    return PosixError("fsync", path, errno);
  if (fd.Close() != 0) return PosixError("close", path, errno);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> CopyFileDurably(
    const std::string& from, const std::string& to,
    const std::function<absl::Status(absl::string_view piece)>& passed) {
  UniqueFd source(RetryOnInterrupt([&] { return ::open(from.c_str(), O_RDONLY | O_CLOEXEC); }));
  if (!source.valid()) return PosixError("open", from, errno);
  UniqueFd copy(RetryOnInterrupt(
      [&] { return ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }));
  if (!copy.valid()) return PosixError("create", to, errno);
  const std::unique_ptr<char[]> piece(new char[kCopyPieceBytes]);
  uint64_t copied = 0;
  for (;;) {
    const ssize_t got =
        RetryOnInterrupt([&] { return ::read(source.get(), piece.get(), kCopyPieceBytes); });
    if (got < 0) return PosixError("read", from, errno);
    if (got == 0) break;
    absl::string_view bytes(piece.get(), static_cast<size_t>(got));
    if (absl::Status ok = passed(bytes); !ok.ok()) return ok;
    copied += bytes.size();
    while (!bytes.empty()) {
      const ssize_t written =
          RetryOnInterrupt([&] { return ::write(copy.get(), bytes.data(), bytes.size()); });
      if (written < 0) return PosixError("write", to, errno);
      bytes.remove_prefix(static_cast<size_t>(written));
    }
  }
  if (RetryOnInterrupt([&] { return ::fsync(copy.get()); }) != 0) {
    return PosixError("fsync", to, errno);
  }
  if (copy.Close() != 0) return PosixError("close", to, errno);
  return copied;
}

absl::StatusOr<uint64_t> RegularFileSize(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return PosixError("stat", path, errno);
  if (!S_ISREG(info.st_mode)) return NotARegularFile(path);
  return static_cast<uint64_t>(info.st_size);
}

absl::StatusOr<bool> PathExists(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT) return false;
  return PosixError("stat", path, errno);
}

absl::Status SyncFolder(const std::string& path) {
  UniqueFd fd(
      RetryOnInterrupt([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (!fd.valid()) return PosixError("open folder", path, errno);
  if (RetryOnInterrupt([&] { return ::fsync(fd.get()); }) != 0)
    return PosixError("fsync", path, errno);
  return absl::OkStatus();
}

absl::Status MakeFolders(const std::string& path) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return PosixError("create folder", prefix, errno);
    }
    if (end == std::string::npos) break;
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return PosixError("stat", path, errno);
  if (!S_ISDIR(info.st_mode))
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a folder"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ListFolder(const std::string& path) {
  std::unique_ptr<DIR, FolderCloser> folder(::opendir(path.c_str()));
  if (folder == nullptr) return PosixError("open folder", path, errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(folder.get());
    if (entry == nullptr) {
      if (errno != 0) return PosixError("read folder", path, errno);
      break;
    }
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status RemoveTree(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return errno == ENOENT ? absl::OkStatus() : PosixError("stat", path, errno);
  }
  if (!S_ISDIR(info.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return PosixError("remove", path, errno);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> names = ListFolder(path);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (absl::Status removed = RemoveTree(JoinPath(path, name)); !removed.ok()) return removed;
  }
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
    return PosixError("remove folder", path, errno);
  return absl::OkStatus();
}

}  // namespace cohort::checkpoint_internal
