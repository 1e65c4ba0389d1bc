// GridPoints: the trials of Determined's grid searcher, one per point of the hyperparameter grid.
//
// Each hyperparameter contributes its grid values:
// - int: `count` evenly spaced integers from minval to maxval, each rounded half away from zero;
//   count is first clamped to the number of integers in the range, so the values are distinct.
// - double: minval + i (maxval - minval) / (count - 1) for i = 0 .. count - 1.
// - log: base^x for the double values x of the exponent range.
// - count 1 (int, double, log): the midpoint of the range (of the exponents for log).
// - categorical: every value, in the order written; const: its one value.
// Equal numeric values collapse to one. The grid is the cartesian product in hyperparameter name
// order, the first name varying slowest:
//
//   a: {type: categorical, vals: [x, y]}, b: {type: int, minval: 1, maxval: 3, count: 3}
//   -> {a: x, b: 1}, {a: x, b: 2}, {a: x, b: 3}, {a: y, b: 1}, {a: y, b: 2}, {a: y, b: 3}
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_SEARCH_GRID_POINTS_H_
#define COHORT_RUNTIME_SEARCH_GRID_POINTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/config/experiment_config.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

// INVALID_ARGUMENT when an int, double or log space has no count (naming it), or when the grid
// has more than `max_points` points (at most 2^32).
absl::StatusOr<std::vector<Hyperparameters>> GridPoints(
    const std::map<std::string, HyperparameterSpace>& spaces, uint64_t max_points);

// For each int, double or log space whose grid values are fewer than its `count` (an int range
// of fewer integers, minval equal to maxval, a range too narrow for distinct doubles), a line
// saying so: "hyperparameters.lr: count 3, but its range gives 1 distinct value (0.1): the
// grid takes it once". Spaces without a count are GridPoints' to refuse.
std::vector<std::string> GridCountNotes(const std::map<std::string, HyperparameterSpace>& spaces);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_GRID_POINTS_H_
