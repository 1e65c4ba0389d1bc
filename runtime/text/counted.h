// A count and its noun, for messages: "1 slot", "2 slots".
//
//   Counted(2, "slot");  // "2 slots"
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_TEXT_COUNTED_H_
#define COHORT_RUNTIME_TEXT_COUNTED_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cohort {

// `noun` is the singular, made plural with an "s".
inline std::string Counted(uint64_t count, absl::string_view noun) {
  return absl::StrCat(count, " ", noun, count == 1 ? "" : "s");
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_TEXT_COUNTED_H_
