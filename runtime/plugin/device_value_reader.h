// DeviceValueReader: how the host takes a plugin's metric values that are still on the device
// (host_api.metric_add_device) without waiting for the device each batch. Capture notes a value;
// EnqueueCopies, called when the plugin's call returns, enqueues the copies of the values noted
// since, on the plugin's stream after the work that computes them, into memory the reader owns
// (one launch for all of them); TakeAll waits for those copies once and returns the values. The
// CUDA implementation comes with the CUDA exchange module (DeviceExchange::value_reader).
//
//   absl::StatusOr<uint32_t> ticket = reader.Capture(loss_on_device, COHORT_DTYPE_FLOAT64);
//   reader.EnqueueCopies();                   // once train_batch returned
//   ...                                       // more batches, nothing waits
//   absl::StatusOr<std::vector<double>> values = reader.TakeAll();   // values[*ticket]
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_PLUGIN_DEVICE_VALUE_READER_H_
#define COHORT_RUNTIME_PLUGIN_DEVICE_VALUE_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"

namespace cohort {

class DeviceValueReader {
 public:
  virtual ~DeviceValueReader() = default;

  // Notes the float32 or float64 (`dtype`) at `device_value`, in device memory the plugin's stream
  // writes, to be copied by the next EnqueueCopies; returns its ticket: 0 for the first capture
  // after TakeAll, then 1, ...
  virtual absl::StatusOr<uint32_t> Capture(const void* device_value, cohort_dtype dtype) = 0;

  // Enqueues the copies of the values noted since the previous call, after the work already on
  // the plugin's stream; the values may be overwritten by work enqueued after this returns.
  virtual absl::Status EnqueueCopies() = 0;

  // Enqueues what is still noted, waits for the copies since the previous TakeAll and returns
  // their values by ticket, as doubles; the next Capture's ticket is 0 again.
  virtual absl::StatusOr<std::vector<double>> TakeAll() = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_DEVICE_VALUE_READER_H_
