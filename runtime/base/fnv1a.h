// Fnv1a64: the 64-bit FNV-1a hash of some bytes. Fixed by its definition (unlike std::hash) and
// independent of the host's byte order, so it can be written to disk or compared across ranks and
// machines: checksums of the optimizer state's bytes, the training fingerprint, the ranks' layout
// and metric-name checks. Not a cryptographic hash: it catches accidents, not an adversary.
#ifndef COHORT_RUNTIME_BASE_FNV1A_H_
#define COHORT_RUNTIME_BASE_FNV1A_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace cohort {

uint64_t Fnv1a64(absl::string_view bytes);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_FNV1A_H_
