// The known name nearest to a misspelt one, for "did you mean" hints.
//
//   ClosestName("searchr", {"searcher", "resources"});  // "searcher"
//   ClosestName("zzz", {"searcher"});                   // nullopt: nothing is near
//
// Near means at most one edit (insert, delete, substitute, swap neighbours) for a name shorter
// than 6 characters, two below 15, and three from 15 (aggregate_frequency for
// aggregation_frequency), so short names only match short slips.
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_TEXT_CLOSEST_NAME_H_
#define COHORT_RUNTIME_TEXT_CLOSEST_NAME_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cohort {

std::optional<std::string> ClosestName(absl::string_view name,
                                       absl::Span<const absl::string_view> known);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TEXT_CLOSEST_NAME_H_
