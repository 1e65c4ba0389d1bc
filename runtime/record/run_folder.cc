#include "runtime/record/run_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunFolder> RunFolder::Create(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create run folder ", path, ": ", error.message()));
  }
  if (std::filesystem::exists(path + "/config.yaml")) {
    return absl::FailedPreconditionError(
        absl::StrCat("run folder ", path, " already holds an experiment; use --resume ", path,
                     " to continue it, or another --output"));
  }
  return RunFolder(path);
}

absl::StatusOr<RunFolder> RunFolder::Open(const std::string& path) {
  std::error_code error;
  const bool there = std::filesystem::exists(path, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the run folder ", path, ": ", error.message()));
  }
  if (!there) return absl::NotFoundError(absl::StrCat("there is no run folder ", path));
  if (!std::filesystem::exists(path + "/config.yaml")) {
    return absl::NotFoundError(
        absl::StrCat(path, " is not a run folder of cohort run (it has no config.yaml)"));
  }
  return RunFolder(path);
}

std::string RunFolder::trial_dir(uint64_t trial_id) const {
  return absl::StrCat(path_, "/trials/", trial_id);
}

absl::Status RunFolder::PrepareTrial(uint64_t trial_id) const {
  std::error_code error;
  std::filesystem::create_directories(trial_dir(trial_id), error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", trial_dir(trial_id), ": ", error.message()));
  }
  return absl::OkStatus();
}

std::string DefaultRunPath(const std::string& parent, const std::string& name) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  std::string component = name;
  for (char& c : component) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      c = '_';
    }
  }
  component.erase(0, component.find_first_not_of('.'));
  if (component.empty()) component = "experiment";
  const std::string base = absl::StrCat(parent, "/", component, "-", stamp);
  std::string path = base;
  for (int n = 2; std::filesystem::exists(path); ++n) path = absl::StrCat(base, "-", n);
  return path;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const std::string temporary = absl::StrCat(path, ".tmp.", ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temporary);
  absl::Status status = WriteAll(fd, contents, temporary);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoError("cannot fsync", temporary);
  ::close(fd);
  if (status.ok() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename over", path);
  }
  if (!status.ok()) ::unlink(temporary.c_str());
  return status;
}

absl::Status AppendLine(const std::string& path, absl::string_view line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot open", path);
  absl::Status status = WriteAll(fd, absl::StrCat(line, "\n"), path);
  ::close(fd);
  return status;
}

}  // namespace cohort
