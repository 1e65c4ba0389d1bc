#include "runtime/orchestrator/straggler_watch.h"

#include "absl/strings/str_format.h"

namespace cohort {

std::vector<RankPace> StragglerWatch::Observe(const std::vector<RankPace>& ranks,
                                              double threshold) {
  std::vector<RankPace> stragglers;
  for (const RankPace& pace : ranks) {
    if (pace.rank >= streak_.size()) streak_.resize(pace.rank + 1, 0);
    // A rank behind by a few microseconds a batch (a model that steps in microseconds) is noise.
    const double behind = pace.step_seconds * (1 - pace.vs_fastest);
    const bool slow = threshold > 0 && pace.vs_fastest * (1 + threshold) < 1 &&
                      behind >= kStragglerMinSecondsBehind;
    streak_[pace.rank] = slow ? streak_[pace.rank] + 1 : 0;
    if (streak_[pace.rank] == kStragglerReports) stragglers.push_back(pace);
  }
  return stragglers;
}

std::string DescribeStraggler(const RankPace& pace) {
  return absl::StrFormat(
      "rank %u is a straggler: its step took %.4g s per batch, %.2fx the fastest rank's, for %u "
      "training reports in a row (%.4g s in the plugin; %.2f of its own best)",
      pace.rank, pace.step_seconds, pace.vs_fastest > 0 ? 1 / pace.vs_fastest : 0.0,
      kStragglerReports, pace.compute_seconds, pace.vs_best);
}

}  // namespace cohort
