// JsonQuoted: text as a JSON string, for the files observe writes by hand (timelines, flight
// reports).
//
//   line += JsonQuoted("bucket \"2\"");   // "bucket \"2\""
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_OBSERVE_JSON_QUOTE_H_
#define COHORT_RUNTIME_OBSERVE_JSON_QUOTE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// `text` in double quotes, escaped. Tabs and line breaks get their two-character escapes, which
// every viewer reads (some JSON trace importers refuse \uXXXX); other control characters \u00XX.
std::string JsonQuoted(absl::string_view text);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_JSON_QUOTE_H_
