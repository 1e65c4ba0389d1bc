#include "runtime/plugin/state_stream.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/plugin/error.h"

namespace cohort {

cohort_error* WriterWrite(cohort_writer* writer, const void* data, size_t size) {
  if (writer == nullptr) return NewError(absl::InvalidArgumentError("writer_write: NULL writer"));
  if (size == 0) return nullptr;
  if (data == nullptr) return NewError(absl::InvalidArgumentError("writer_write: NULL data"));
  writer->bytes.append(static_cast<const char*>(data), size);
  return nullptr;
}

cohort_error* ReaderRead(cohort_reader* reader, void* data, size_t size) {
  if (reader == nullptr) return NewError(absl::InvalidArgumentError("reader_read: NULL reader"));
  const size_t left = reader->bytes.size() - reader->position;
  if (size > left) {
    return NewError(
        absl::OutOfRangeError(absl::StrCat("reader_read: asked for ", size, " bytes but only ",
                                           left, " are left of ", reader->bytes.size())));
  }
  if (size == 0) return nullptr;
  if (data == nullptr) return NewError(absl::InvalidArgumentError("reader_read: NULL data"));
  std::memcpy(data, reader->bytes.data() + reader->position, size);
  reader->position += size;
  return nullptr;
}

uint64_t ReaderRemaining(const cohort_reader* reader) {
  return reader == nullptr ? 0 : reader->bytes.size() - reader->position;
}

}  // namespace cohort
