#include <cmath>

#include "runtime/config/experiment_config.h"

namespace cohort {

Hyperparameters::Value SingleSearcherChoice(const HyperparameterSpace& space) {
  switch (space.kind) {
    case HyperparameterSpace::Kind::kConst:
      return space.value;
    case HyperparameterSpace::Kind::kInt: {
      // Bounds are integers within 2^53 (the reader checks), so the conversions are exact; the
      // bit form of floor((lo + hi) / 2) cannot overflow.
      const auto lo = static_cast<int64_t>(space.minval);
      const auto hi = static_cast<int64_t>(space.maxval);
      return (lo & hi) + ((lo ^ hi) >> 1);
    }
    case HyperparameterSpace::Kind::kDouble:
      return (space.minval + space.maxval) / 2;
    case HyperparameterSpace::Kind::kLog:
      return std::pow(space.base, (space.minval + space.maxval) / 2);
    case HyperparameterSpace::Kind::kCategorical:
      if (!space.vals.empty()) return space.vals.front();
      break;
  }
  return Hyperparameters::Other{"null"};
}

}  // namespace cohort
