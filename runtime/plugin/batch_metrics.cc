#include "runtime/plugin/batch_metrics.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/plugin/error.h"
#include "runtime/text/utf8.h"

namespace cohort {

const Metric* BatchMetrics::Find(absl::string_view name) const {
  for (const Metric& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

absl::Status BatchMetrics::Add(absl::string_view name, double value, uint64_t record_count,
                               cohort_reduction reduction) {
  if (name.empty()) return absl::InvalidArgumentError("metric_add: empty metric name");
  if (FirstInvalidUtf8Byte(name).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric '", absl::CHexEscape(name), "': the name is not UTF-8 text"));
  }
  if (reduction < COHORT_REDUCE_MEAN || reduction > COHORT_REDUCE_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("metric '", name, "': unknown reduction ", reduction,
                                                   "; allowed: 1 (mean), 2 (sum), 3 (min), 4 (max)"));
  }
  if (Find(name) != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("metric '", name, "' was added twice in one batch"));
  }
  metrics.push_back(Metric{std::string(name), value, record_count, reduction});
  return absl::OkStatus();
}

cohort_error* MetricAdd(cohort_metrics* metrics, const char* name, size_t name_len, double value,
                        uint64_t record_count, cohort_reduction reduction) {
  if (metrics == nullptr) return NewError(absl::InvalidArgumentError("metric_add: NULL metrics sink"));
  absl::Status s = metrics->batch.Add(absl::string_view(name, name == nullptr ? 0 : name_len), value,
                                      record_count, reduction);
  return s.ok() ? nullptr : NewError(std::move(s));
}

}  // namespace cohort
