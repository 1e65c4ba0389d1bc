// TFRecord framing, the container of TensorBoard's event files: each record is its length
// (uint64, little-endian), the masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C
// of the data. Masking rotates the CRC right by 15 bits and adds 0xa282ead8, so a CRC of bytes
// that hold CRCs is not itself trivial.
//
//   std::string bytes = TfRecord(event_bytes);   // append to an events.out.tfevents.* file
//
// Pure functions: safe from any thread.
#ifndef COHORT_RUNTIME_RECORD_TFRECORD_H_
#define COHORT_RUNTIME_RECORD_TFRECORD_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// Appends the low `bytes` bytes of `value`, least significant first (TFRecord's lengths and CRCs,
// protobuf's fixed-width fields).
void AppendLittleEndian(std::string& out, uint64_t value, int bytes);

// The masked CRC-32C of `data`.
uint32_t MaskedCrc32c(absl::string_view data);

// `data` framed as one record.
std::string TfRecord(absl::string_view data);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_TFRECORD_H_
