// ProgressThrottle: thins one task's progress reports to at most one per interval, so the
// orchestrator hears of a trial's progress about once a second however often its worker reports.
//
// The newest report wins: Keep replaces whatever was kept and not yet let through. Due lets the
// kept report through at once if it is the first, else once `interval_seconds` have passed since
// the last one it let through; so a report held back goes out when its interval is up, even if
// no newer report follows. Take lets the kept report through whatever the time, as the task ends.
// Times are seconds on any monotonic clock.
//
//   ProgressThrottle throttle;
//   throttle.Keep(report);                                          // as reports arrive
//   if (std::optional<ProgressReport> due = throttle.Due(now)) Send(*due);   // then, and on
//                                                                             // every tick
//   if (std::optional<ProgressReport> last = throttle.Take()) Send(*last);  // at the end
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_AGENT_PROGRESS_THROTTLE_H_
#define COHORT_RUNTIME_AGENT_PROGRESS_THROTTLE_H_

#include <optional>

#include "runtime/control/worker_messages.h"

namespace cohort {

// The shortest time between two progress reports an agent forwards for one task.
inline constexpr double kProgressForwardSeconds = 1.0;

class ProgressThrottle {
 public:
  explicit ProgressThrottle(double interval_seconds = kProgressForwardSeconds)
      : interval_seconds_(interval_seconds) {}

  // Keeps `report` in place of the report kept, if any.
  void Keep(const ProgressReport& report) { kept_ = report; }

  // The kept report, no longer kept, when it is the first let through or `interval_seconds` or
  // more have passed between the last one let through and `now`; else nullopt.
  std::optional<ProgressReport> Due(double now);

  // The kept report, no longer kept, whatever the time; nullopt when none is kept.
  std::optional<ProgressReport> Take();

 private:
  double interval_seconds_;
  std::optional<ProgressReport> kept_;
  std::optional<double> last_let_through_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_PROGRESS_THROTTLE_H_
