// The log lines of Cohort's daemons (the orchestrator, an agent) on stderr, each stamped with the
// time in UTC, ISO 8601 to the millisecond, so lines of several machines' logs sort and line up:
//
//   2026-11-27T07:12:03.125Z orchestrator: experiment 3 (mnist) submitted: grid searcher, ...
//
// Thread-safety: safe from any thread (one fprintf per line).
#ifndef COHORT_RUNTIME_BASE_DAEMON_LOG_H_
#define COHORT_RUNTIME_BASE_DAEMON_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// "<time> <who>: <line>" for a line logged at `unix_seconds`.
std::string DaemonLogLine(double unix_seconds, absl::string_view who, absl::string_view line);

// Writes DaemonLogLine(now, who, line) and a newline to stderr.
void LogDaemonLine(absl::string_view who, absl::string_view line);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_DAEMON_LOG_H_
