// BatchMetrics: the runtime's side of the SDK's cohort_metrics sink, filled by one train_batch or
// evaluate_batch call through host_api.metric_add.
#ifndef COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_
#define COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_

#include <cstdint>
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
};

// The metrics of one batch, in the order the plugin added them.
struct BatchMetrics {
  std::vector<Metric> metrics;

  // The metric called `name`, or nullptr.
  const Metric* Find(absl::string_view name) const;
  // INVALID_ARGUMENT for an empty or repeated name, an unknown reduction or a non-UTF-8 name.
  absl::Status Add(absl::string_view name, double value, uint64_t record_count,
                   cohort_reduction reduction);
};

}  // namespace cohort

struct cohort_metrics {
  cohort::BatchMetrics batch;
};

namespace cohort {
// host_api.metric_add.
cohort_error* MetricAdd(cohort_metrics* metrics, const char* name, size_t name_len, double value,
                        uint64_t record_count, cohort_reduction reduction);
}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_BATCH_METRICS_H_
