// UTF-8 validation for text that leaves the process as text: config files, metric names.
//
//   if (std::optional<size_t> bad = FirstInvalidUtf8Byte(text)) ...  // text[*bad] starts it
//
// Pure functions: safe to call from any thread.
#ifndef COHORT_RUNTIME_TEXT_UTF8_H_
#define COHORT_RUNTIME_TEXT_UTF8_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace cohort {

// The offset of the first byte that does not begin a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF, no sequence cut short), or nullopt when
// all of `text` is well-formed.
std::optional<size_t> FirstInvalidUtf8Byte(absl::string_view text);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TEXT_UTF8_H_
