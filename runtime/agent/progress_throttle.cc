#include "runtime/agent/progress_throttle.h"

#include <utility>

namespace cohort {

std::optional<ProgressReport> ProgressThrottle::Due(double now) {
  if (!kept_ || (last_let_through_ && now - *last_let_through_ < interval_seconds_)) {
    return std::nullopt;
  }
  last_let_through_ = now;
  return Take();
}

std::optional<ProgressReport> ProgressThrottle::Take() {
  std::optional<ProgressReport> taken;
  taken.swap(kept_);
  return taken;
}

}  // namespace cohort
