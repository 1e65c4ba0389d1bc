#include "runtime/base/daemon_log.h"

#include <time.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/base/clock.h"

namespace cohort {

std::string DaemonLogLine(double unix_seconds, absl::string_view who, absl::string_view line) {
  // Milliseconds rounded down, so a line never shows a time after it was logged.
  const auto millis = static_cast<int64_t>(std::floor(unix_seconds * 1e3));
  const time_t seconds = static_cast<time_t>(millis / 1000);
  struct tm utc = {};
  gmtime_r(&seconds, &utc);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s: %s", utc.tm_year + 1900,
                         utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                         static_cast<int>(millis % 1000), who, line);
}

void LogDaemonLine(absl::string_view who, absl::string_view line) {
  const std::string text =
      absl::StrCat(DaemonLogLine(SystemClock().UnixSeconds(), who, line), "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace cohort
