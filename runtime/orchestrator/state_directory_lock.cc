#include "runtime/orchestrator/state_directory_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

absl::Status Failed(const char* what, const std::string& path, int error) {
  return absl::InternalError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(error)));
}

// The pid the holder wrote, or "unknown" (it may be between its lock and its write).
std::string HolderPid(int fd) {
  char text[32] = {};
  const ssize_t read = ::pread(fd, text, sizeof text - 1, 0);
  const std::string pid(absl::StripAsciiWhitespace(read > 0 ? text : ""));
  return pid.empty() ? std::string("unknown") : pid;
}

}  // namespace

absl::StatusOr<StateDirectoryLock> StateDirectoryLock::Acquire(const std::string& root,
                                                               const Wording& wording) {
  std::error_code error;
  std::filesystem::create_directories(root, error);
  if (error) return Failed("create the state directory", root, error.value());
  const std::string path = absl::StrCat(root, "/", kFileName);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Failed("open", path, errno);
  StateDirectoryLock lock(fd);
  struct flock whole_file {};
  whole_file.l_type = F_WRLCK;
  whole_file.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &whole_file) != 0) {
    if (errno != EAGAIN && errno != EACCES) return Failed("lock", path, errno);
    return absl::FailedPreconditionError(absl::StrCat(
        wording.what.empty() ? absl::StrCat("the state directory ", root) : wording.what,
        " is in use by ", wording.holder, " (pid ", HolderPid(fd), ", as ", path,
        " says): ", wording.remedy));
  }
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Failed("write", path, errno);
  }
  return lock;
}

absl::StatusOr<StateDirectoryLock> StateDirectoryLock::Acquire(const std::string& root) {
  return Acquire(root, Wording());
}

StateDirectoryLock::StateDirectoryLock(StateDirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

StateDirectoryLock& StateDirectoryLock::operator=(StateDirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

StateDirectoryLock::~StateDirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace cohort
