// IsBetterMetric: how a searcher metric ranks against the best so far, for the trial's own
// "best so far" (checkpoint_policy: best) and for the run record's best validation.
//
//   if (IsBetterMetric(value, best, config.searcher.smaller_is_better)) best = value;
//
// A NaN (a trial that diverged) is never better, not even than no metric at all; any number is
// better than a NaN held from before. Plain comparisons would make the first NaN the best for good,
// since every comparison with it is false.
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_BASE_METRIC_ORDER_H_
#define COHORT_RUNTIME_BASE_METRIC_ORDER_H_

#include <cmath>
#include <optional>

namespace cohort {

inline bool IsBetterMetric(double candidate, std::optional<double> best, bool smaller_is_better) {
  if (std::isnan(candidate)) return false;
  if (!best || std::isnan(*best)) return true;
  return smaller_is_better ? candidate < *best : candidate > *best;
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_METRIC_ORDER_H_
