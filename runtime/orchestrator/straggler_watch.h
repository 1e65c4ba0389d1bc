// StragglerWatch: a task's ranks' paces (RankPace, from rank 0's training reports), report after
// report; says when a rank has been slower than the fastest rank by more than a threshold for
// kStragglerReports reports in a row, once per such stretch.
//
//   StragglerWatch watch;
//   for (const RankPace& slow : watch.Observe(report.ranks, /*threshold=*/0.2)) Warn(slow);
//
// Slower by more than `threshold`: step_seconds > (1 + threshold) x the fastest rank's, i.e.
// vs_fastest < 1 / (1 + threshold), and by kStragglerMinSecondsBehind a batch at least. A
// threshold of 0 never warns.
//
// Thread-safety: one thread.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_STRAGGLER_WATCH_H_
#define COHORT_RUNTIME_ORCHESTRATOR_STRAGGLER_WATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/control/worker_messages.h"

namespace cohort {

inline constexpr uint32_t kStragglerReports = 3;
// What a straggler's step takes beyond the fastest rank's, at least: less is noise (the ranks of
// a model that steps in a tenth of a millisecond differ by 20% from one report to the next).
inline constexpr double kStragglerMinSecondsBehind = 0.001;

class StragglerWatch {
 public:
  // The ranks of `ranks` that have just been slow for kStragglerReports reports in a row.
  std::vector<RankPace> Observe(const std::vector<RankPace>& ranks, double threshold);

 private:
  std::vector<uint32_t> streak_;  // by rank: reports in a row it was slow
};

// "rank 1 is a straggler: its step took 0.0102 s per batch, 2.04x the fastest rank's, for 3
// training reports in a row (0.0095 s in the plugin; 0.98 of its own best)".
std::string DescribeStraggler(const RankPace& pace);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_STRAGGLER_WATCH_H_
