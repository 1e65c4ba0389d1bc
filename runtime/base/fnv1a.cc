#include "runtime/base/fnv1a.h"

namespace cohort {

uint64_t Fnv1a64(absl::string_view bytes) {
  constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t hash = kOffsetBasis;
  for (const unsigned char byte : bytes) {
    hash ^= byte;
    hash *= kPrime;
  }
  return hash;
}

}  // namespace cohort
