// RefusalLog: reports refused connections without flooding the log. A refused ZeroMQ peer
// reconnects every 100 ms by default, so the same refusal repeats: each distinct line is reported
// the first time, then at most once per `repeat_seconds`, saying how many repeats were held back.
//
//   RefusalLog log(PrintSecurityLine);
//   log.Report("refused CURVE client ... from 10.0.0.5: its key is not authorized", now);
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_SECURITY_REFUSAL_LOG_H_
#define COHORT_RUNTIME_SECURITY_REFUSAL_LOG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// Receives one line per event worth logging; called on the authenticator's thread.
using SecurityLogSink = std::function<void(absl::string_view line)>;

// The default sink: "cohort security: <line>" on stderr.
void PrintSecurityLine(absl::string_view line);

class RefusalLog {
 public:
  explicit RefusalLog(SecurityLogSink sink, double repeat_seconds = 60.0);

  // Reports `line` at `now` (seconds on a monotonic clock) unless it was reported less than
  // repeat_seconds ago.
  void Report(const std::string& line, double now) { Report(line, line, now); }

  // The same, counting repeats by `key` instead of by the line: lines that differ in detail (the
  // reason a message was malformed) but come from one source and kind share a key.
  void Report(const std::string& key, const std::string& line, double now);

 private:
  struct Seen {
    double last_reported = 0;
    uint64_t held_back = 0;
  };

  SecurityLogSink sink_;
  double repeat_seconds_;
  std::map<std::string, Seen> seen_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_REFUSAL_LOG_H_
