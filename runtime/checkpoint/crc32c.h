// CRC-32C (Castagnoli, the checksum of iSCSI and ext4): guards every checkpoint file and the
// manifest itself.
//
//   uint32_t crc = Crc32c("123456789");                   // 0xE3069283
//   uint32_t same = Crc32cExtend(Crc32c("1234"), "56789");  // also 0xE3069283
//
// Table-driven, eight bytes per step; no hardware instructions. Pure functions: safe to call from
// any thread.
#ifndef COHORT_RUNTIME_CHECKPOINT_CRC32C_H_
#define COHORT_RUNTIME_CHECKPOINT_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace cohort {

// The CRC-32C of the concatenation of the bytes that gave `crc` and `data`.
uint32_t Crc32cExtend(uint32_t crc, absl::string_view data);

inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data); }

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_CRC32C_H_
