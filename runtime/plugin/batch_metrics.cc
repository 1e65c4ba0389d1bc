#include "runtime/plugin/batch_metrics.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/plugin/error.h"
#include "runtime/plugin/model_host.h"
#include "runtime/text/utf8.h"

namespace cohort {

const Metric* BatchMetrics::Find(absl::string_view name) const {
  for (const Metric& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool BatchMetrics::unsettled() const {
  for (const Metric& m : metrics) {
    if (m.device_ticket) return true;
  }
  return false;
}

absl::Status BatchMetrics::CheckNew(absl::string_view name, cohort_reduction reduction) const {
  if (name.empty()) return absl::InvalidArgumentError("metric_add: empty metric name");
  if (FirstInvalidUtf8Byte(name).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric '", absl::CHexEscape(name), "': the name is not UTF-8 text"));
  }
  if (reduction < COHORT_REDUCE_MEAN || reduction > COHORT_REDUCE_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric '", name, "': unknown reduction ", reduction,
                     "; allowed: 1 (mean), 2 (sum), 3 (min), 4 (max)"));
  }
  if (Find(name) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric '", name, "' was added twice in one batch"));
  }
  return absl::OkStatus();
}

absl::Status BatchMetrics::Add(absl::string_view name, double value, uint64_t record_count,
                               cohort_reduction reduction) {
  if (absl::Status s = CheckNew(name, reduction); !s.ok()) return s;
  metrics.push_back(Metric{std::string(name), value, record_count, reduction, std::nullopt});
  return absl::OkStatus();
}

absl::Status BatchMetrics::AddOnDevice(absl::string_view name, uint32_t ticket,
                                       uint64_t record_count, cohort_reduction reduction) {
  if (absl::Status s = CheckNew(name, reduction); !s.ok()) return s;
  metrics.push_back(Metric{std::string(name), 0.0, record_count, reduction, ticket});
  return absl::OkStatus();
}

cohort_error* MetricAdd(cohort_metrics* metrics, const char* name, size_t name_len, double value,
                        uint64_t record_count, cohort_reduction reduction) {
  if (metrics == nullptr)
    return NewError(absl::InvalidArgumentError("metric_add: NULL metrics sink"));
  absl::Status s = metrics->batch.Add(absl::string_view(name, name == nullptr ? 0 : name_len),
                                      value, record_count, reduction);
  return s.ok() ? nullptr : NewError(std::move(s));
}

namespace {

// The value at `device_value` (on `host`'s device), read now through its memory.
absl::StatusOr<double> ReadNow(const ModelHost& host, const void* device_value,
                               cohort_dtype dtype) {
  absl::StatusOr<DeviceMemory*> memory = host.options.memory->For(host.options.context.device);
  if (!memory.ok()) return memory.status();
  if (dtype == COHORT_DTYPE_FLOAT32) {
    float value = 0;
    if (absl::Status s = (*memory)->CopyToHost(&value, device_value, sizeof value); !s.ok()) {
      return s;
    }
    return value;
  }
  double value = 0;
  if (absl::Status s = (*memory)->CopyToHost(&value, device_value, sizeof value); !s.ok()) {
    return s;
  }
  return value;
}

}  // namespace

cohort_error* MetricAddDevice(cohort_metrics* metrics, const char* name, size_t name_len,
                              const void* device_value, cohort_dtype dtype, uint64_t record_count,
                              cohort_reduction reduction) {
  if (metrics == nullptr || metrics->host == nullptr) {
    return NewError(absl::InvalidArgumentError("metric_add_device: NULL metrics sink"));
  }
  const absl::string_view metric(name, name == nullptr ? 0 : name_len);
  if (device_value == nullptr) {
    return NewError(absl::InvalidArgumentError(
        absl::StrCat("metric_add_device '", absl::CHexEscape(metric), "': NULL value pointer")));
  }
  if (dtype != COHORT_DTYPE_FLOAT32 && dtype != COHORT_DTYPE_FLOAT64) {
    return NewError(absl::InvalidArgumentError(
        absl::StrCat("metric_add_device '", absl::CHexEscape(metric), "': dtype ", dtype,
                     " is not one of 1 (float32), 4 (float64)")));
  }
  const ModelHost& host = *metrics->host;
  DeviceValueReader* reader = host.options.device_values;
  if (reader == nullptr) {
    absl::StatusOr<double> value = ReadNow(host, device_value, dtype);
    if (!value.ok()) return NewError(value.status());
    return MetricAdd(metrics, name, name_len, *value, record_count, reduction);
  }
  // Checked before the capture, so a refused metric leaves no value behind in the reader.
  if (absl::Status s = metrics->batch.CheckNew(metric, reduction); !s.ok()) {
    return NewError(std::move(s));
  }
  absl::StatusOr<uint32_t> ticket = reader->Capture(device_value, dtype);
  if (!ticket.ok()) return NewError(ticket.status());
  absl::Status s = metrics->batch.AddOnDevice(metric, *ticket, record_count, reduction);
  return s.ok() ? nullptr : NewError(std::move(s));
}

}  // namespace cohort
