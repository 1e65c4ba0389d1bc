#include "runtime/text/closest_name.h"

#include <algorithm>
#include <vector>

namespace cohort {
namespace {

// Optimal string alignment distance: Levenshtein plus swapping two neighbouring characters.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * width + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

}  // namespace

std::optional<std::string> ClosestName(absl::string_view name,
                                       absl::Span<const absl::string_view> known) {
  const size_t allowed = name.size() < 6 ? 1 : name.size() < 15 ? 2 : 3;
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (absl::string_view candidate : known) {
    const size_t distance = EditDistance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace cohort
