// UniqueFd: owns a POSIX file descriptor and closes it on destruction.
//
//   UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
//   if (!fd.valid()) return PosixError("open", path, errno);
//
// Thread-safety: none; one owner at a time (movable, not copyable).
#ifndef COHORT_RUNTIME_CHECKPOINT_INTERNAL_UNIQUE_FD_H_
#define COHORT_RUNTIME_CHECKPOINT_INTERNAL_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace cohort::checkpoint_internal {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Close(); }

  bool valid() const { return fd_ >= 0; }
  int get() const { return fd_; }

  // The result of close(2); 0 when nothing was open. Never retried: Linux releases the
  // descriptor even when close reports EINTR.
  int Close() { return fd_ >= 0 ? ::close(std::exchange(fd_, -1)) : 0; }

 private:
  int fd_ = -1;
};

}  // namespace cohort::checkpoint_internal

#endif  // COHORT_RUNTIME_CHECKPOINT_INTERNAL_UNIQUE_FD_H_
