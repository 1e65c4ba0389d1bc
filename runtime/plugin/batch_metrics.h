// BatchMetrics: the runtime's side of the SDK's cohort_metrics sink, filled by one train_batch or
// evaluate_batch call through host_api.metric_add, or metric_add_device (SDK 1.3) for a value still
// on the device: then the metric holds a DeviceValueReader ticket until LoadedModel::Settle reads
// it.
#ifndef COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_
#define COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"

namespace cohort {

struct Metric {
  std::string name;
  double value;
  uint64_t record_count;
  cohort_reduction reduction;
  std::optional<uint32_t> device_ticket;  // set: `value` is not read yet (see Settle)
};

// The metrics of one batch, in the order the plugin added them.
struct BatchMetrics {
  std::vector<Metric> metrics;

  // The metric called `name`, or nullptr.
  const Metric* Find(absl::string_view name) const;
  // INVALID_ARGUMENT for an empty or repeated name, an unknown reduction or a non-UTF-8 name.
  absl::Status Add(absl::string_view name, double value, uint64_t record_count,
                   cohort_reduction reduction);
  // Add's checks of a new metric.
  absl::Status CheckNew(absl::string_view name, cohort_reduction reduction) const;
  // As Add, for a value still on the device under `ticket`.
  absl::Status AddOnDevice(absl::string_view name, uint32_t ticket, uint64_t record_count,
                           cohort_reduction reduction);
  // Whether a metric's value is still on the device.
  bool unsettled() const;
};

}  // namespace cohort

struct cohort_host;

struct cohort_metrics {
  cohort::BatchMetrics batch;
  cohort_host* host = nullptr;  // the model's host, for metric_add_device
};

namespace cohort {
// host_api.metric_add.
cohort_error* MetricAdd(cohort_metrics* metrics, const char* name, size_t name_len, double value,
                        uint64_t record_count, cohort_reduction reduction);
// host_api.metric_add_device: captured through the host's DeviceValueReader when it has one, else
// read at once through the device's memory (a copy that waits for the device).
cohort_error* MetricAddDevice(cohort_metrics* metrics, const char* name, size_t name_len,
                              const void* device_value, cohort_dtype dtype, uint64_t record_count,
                              cohort_reduction reduction);
}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_
