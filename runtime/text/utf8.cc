#include "runtime/text/utf8.h"

#include <cstdint>

namespace cohort {
namespace {

// The length of the well-formed sequence at text[at], or 0 when there is none. The ranges of
// the second byte that exclude overlong forms, surrogates and values above U+10FFFF are the
// ones of RFC 3629's grammar.
size_t SequenceLength(absl::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[at + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint8_t second_low = 0x80, second_high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) second_low = 0xa0;   // overlong below U+0800
    if (lead == 0xed) second_high = 0x9f;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) second_low = 0x90;   // overlong below U+10000
    if (lead == 0xf4) second_high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  if (byte(1) < second_low || byte(1) > second_high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

std::optional<size_t> FirstInvalidUtf8Byte(absl::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    const size_t length = SequenceLength(text, at);
    if (length == 0) return at;
    at += length;
  }
  return std::nullopt;
}

}  // namespace cohort
