// What `cohort` knows about its own process, for the workers it starts: the executable they run,
// the host they run on, the environment they inherit, and paths they can use from anywhere.
//
//   absl::StatusOr<std::string> cohort = SelfExecutable();   // "/usr/bin/cohort"
//   std::vector<std::string> environment = InheritedEnvironment();   // {"PATH=/usr/bin", ...}
//
// Thread-safety: InheritedEnvironment reads `environ`: not while another thread changes it.
#ifndef COHORT_HARNESS_COHORT_PROCESS_THIS_PROCESS_H_
#define COHORT_HARNESS_COHORT_PROCESS_THIS_PROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cohort {

// This executable's path (/proc/self/exe).
absl::StatusOr<std::string> SelfExecutable();

// This machine's host name ("localhost" when it has none).
std::string HostName();

// `path` made independent of this process's working directory (absolute, normalized), as the
// workers and agents it is handed to need it; `path` itself when that fails.
std::string AbsolutePath(const std::string& path);

// This process's environment as "KEY=VALUE" entries.
std::vector<std::string> InheritedEnvironment();

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_PROCESS_THIS_PROCESS_H_
