#include "runtime/search/grid_points.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

using Kind = HyperparameterSpace::Kind;
using Value = Hyperparameters::Value;

bool IsRange(const HyperparameterSpace& space) {
  return space.kind == Kind::kInt || space.kind == Kind::kDouble || space.kind == Kind::kLog;
}

// The number of integers in an int space's range (its bounds are integers within 2^53).
uint64_t IntegersIn(const HyperparameterSpace& space) {
  return static_cast<uint64_t>(static_cast<int64_t>(space.maxval) -
                               static_cast<int64_t>(space.minval)) +
         1;
}

// How many values the space contributes before equal ones collapse.
uint64_t ValueCount(const HyperparameterSpace& space) {
  switch (space.kind) {
    case Kind::kInt:
      return std::min(*space.count, IntegersIn(space));
    case Kind::kDouble:
    case Kind::kLog:
      return *space.count;
    case Kind::kCategorical:
      return space.vals.size();
    case Kind::kConst:
      break;
  }
  return 1;
}

// whole + fraction / denominator (0 <= fraction < denominator), rounded half away from zero.
int64_t RoundHalfAwayFromZero(int64_t whole, uint64_t fraction, uint64_t denominator) {
  if (2 * fraction > denominator || (2 * fraction == denominator && whole >= 0)) return whole + 1;
  return whole;
}

// `points` integers from lo to lo + span. Needs 2 <= points <= span + 1 (so they are distinct)
// and points <= 2^32 (so i * remainder cannot overflow; GridPoints bounds it far lower).
std::vector<Value> IntValues(int64_t lo, uint64_t span, uint64_t points) {
  const uint64_t steps = points - 1;
  const uint64_t quotient = span / steps;
  const uint64_t remainder = span % steps;
  std::vector<Value> values;
  for (uint64_t i = 0; i < points; ++i) {
    // lo + i * span / steps, exactly: the whole part, then the fraction over `steps`.
    const uint64_t whole = i * quotient + i * remainder / steps;
    values.emplace_back(
        RoundHalfAwayFromZero(lo + static_cast<int64_t>(whole), i * remainder % steps, steps));
  }
  return values;
}

std::vector<double> EvenlySpaced(double lo, double hi, uint64_t points) {
  if (points == 1) return {(lo + hi) / 2};
  std::vector<double> values;
  for (uint64_t i = 0; i < points; ++i) {
    values.push_back(lo + static_cast<double>(i) * (hi - lo) / static_cast<double>(points - 1));
  }
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<Value> GridValues(const HyperparameterSpace& space) {
  const uint64_t points = ValueCount(space);
  std::vector<Value> values;
  switch (space.kind) {
    case Kind::kInt: {
      const auto lo = static_cast<int64_t>(space.minval);
      const uint64_t span = IntegersIn(space) - 1;
      if (points > 1) return IntValues(lo, span, points);
      return {RoundHalfAwayFromZero(lo + static_cast<int64_t>(span / 2), span % 2, 2)};
    }
    case Kind::kDouble:
      for (double x : EvenlySpaced(space.minval, space.maxval, points)) values.emplace_back(x);
      return values;
    case Kind::kLog: {
      std::vector<double> powers;
      for (double x : EvenlySpaced(space.minval, space.maxval, points)) {
        powers.push_back(std::pow(space.base, x));
      }
      powers.erase(std::unique(powers.begin(), powers.end()), powers.end());
      for (double x : powers) values.emplace_back(x);
      return values;
    }
    case Kind::kCategorical:
      return space.vals;
    case Kind::kConst:
      break;
  }
  return {space.value};
}

}  // namespace

absl::StatusOr<std::vector<Hyperparameters>> GridPoints(
    const std::map<std::string, HyperparameterSpace>& spaces, uint64_t max_points) {
  uint64_t total = 1;
  for (const auto& [name, space] : spaces) {
    if (IsRange(space) && (!space.count || *space.count == 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("hyperparameters.", name,
                       ".count: the grid searcher needs the number of grid points "
                       "for an int, double or log range"));
    }
    const uint64_t count = ValueCount(space);
    if (count == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("hyperparameters.", name, ": a categorical space without values"));
    }
    if (count > max_points || total > max_points / count) {
      return absl::InvalidArgumentError(
          absl::StrCat("grid searcher: the product of every hyperparameter's grid points exceeds ",
                       max_points, " trials (at hyperparameters.", name, ", ", count, " points)"));
    }
    total *= count;
  }

  std::vector<std::string> names;
  std::vector<std::vector<Value>> values;
  for (const auto& [name, space] : spaces) {
    names.push_back(name);
    values.push_back(GridValues(space));
  }
  // An odometer over the value lists, the last name turning fastest.
  std::vector<Hyperparameters> grid;
  std::vector<size_t> digits(names.size(), 0);
  while (true) {
    Hyperparameters& point = grid.emplace_back();
    for (size_t i = 0; i < names.size(); ++i) point.Set(names[i], values[i][digits[i]]);
    size_t turning = names.size();
    while (turning > 0 && ++digits[turning - 1] == values[turning - 1].size()) {
      digits[turning - 1] = 0;
      --turning;
    }
    if (turning == 0) return grid;
  }
}

std::vector<std::string> GridCountNotes(const std::map<std::string, HyperparameterSpace>& spaces) {
  std::vector<std::string> notes;
  for (const auto& [name, space] : spaces) {
    if (!IsRange(space) || !space.count || *space.count <= 1) continue;
    const std::vector<Value> values = GridValues(space);
    if (values.size() >= *space.count) continue;
    const bool one = values.size() == 1;
    notes.push_back(
        absl::StrCat("hyperparameters.", name, ": count ", *space.count, ", but its range gives ",
                     values.size(), one ? " distinct value (" : " distinct values (",
                     absl::StrJoin(values, ", ",
                                   [](std::string* out, const Value& value) {
                                     // A range's values are ints or doubles.
                                     if (const int64_t* i = std::get_if<int64_t>(&value)) {
                                       absl::StrAppend(out, *i);
                                     } else {
                                       absl::StrAppend(out,
                                                       YamlDoubleText(std::get<double>(value)));
                                     }
                                   }),
                     one ? "): the grid takes it once" : "): the grid takes each once"));
  }
  return notes;
}

}  // namespace cohort
