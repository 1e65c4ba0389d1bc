#include "runtime/record/tfrecord.h"

#include "runtime/checkpoint/crc32c.h"

namespace cohort {

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t MaskedCrc32c(absl::string_view data) {
  const uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string TfRecord(absl::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  AppendLittleEndian(record, data.size(), 8);
  AppendLittleEndian(record, MaskedCrc32c(record), 4);
  record.append(data.data(), data.size());
  AppendLittleEndian(record, MaskedCrc32c(data), 4);
  return record;
}

}  // namespace cohort
