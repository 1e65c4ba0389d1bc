// The known name nearest to a misspelt one, for "did you mean" hints.
//
//   ClosestName("searchr", {"searcher", "resources"});  // "searcher"
//   ClosestName("zzz", {"searcher"});                   // nullopt: nothing is near
//
// Near means at most two edits (insert, delete, substitute, swap neighbours) and no more than a
// third of the name's length, so short names only match short slips.
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
