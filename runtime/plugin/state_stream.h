// The runtime's side of the SDK's cohort_writer and cohort_reader: a plugin's extra state as
// bytes, appended by save_state and consumed by load_state.
#ifndef COHORT_RUNTIME_PLUGIN_STATE_STREAM_H_
#define COHORT_RUNTIME_PLUGIN_STATE_STREAM_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "cohort/plugin.h"

struct cohort_writer {
  std::string bytes;
};

struct cohort_reader {
  absl::string_view bytes;  // not owned; outlives the load_state call
  size_t position = 0;
};

namespace cohort {
// host_api entries (contracts in plugin.h).
cohort_error* WriterWrite(cohort_writer* writer, const void* data, size_t size);
cohort_error* ReaderRead(cohort_reader* reader, void* data, size_t size);
uint64_t ReaderRemaining(const cohort_reader* reader);
}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_STATE_STREAM_H_
