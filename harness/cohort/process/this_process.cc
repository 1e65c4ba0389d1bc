#include "harness/cohort/process/this_process.h"

#include <unistd.h>

#include <filesystem>

#include "absl/status/status.h"

extern char** environ;

namespace cohort {

absl::StatusOr<std::string> SelfExecutable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return absl::InternalError("cannot find this executable (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

std::vector<std::string> InheritedEnvironment() {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  return environment;
}

}  // namespace cohort
