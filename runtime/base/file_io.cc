#include "runtime/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

absl::Status Failed(const char* call, const std::string& path) {
  return absl::ErrnoToStatus(errno, absl::StrCat(call, " ", path));
}

// Everything from `fd` to its end, whatever its size said: the file may grow or shrink meanwhile.
absl::StatusOr<std::string> ReadOpenFile(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Failed("stat", path);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(info.st_size));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got == 0) return bytes;
    if (got > 0) {
      bytes.append(chunk, static_cast<size_t>(got));
    } else if (errno != EINTR) {
      return Failed("read", path);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Failed("open", path);
  absl::StatusOr<std::string> bytes = ReadOpenFile(fd, path);
  ::close(fd);
  return bytes;
}

absl::Status WriteWholeFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace cohort
