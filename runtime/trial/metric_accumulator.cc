#include "runtime/trial/metric_accumulator.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {

absl::Status MetricAccumulator::Add(const BatchMetrics& batch) {
  for (const Metric& metric : batch.metrics) {
    // A batch without records (a rank's empty share of the last batch) says nothing.
    if (metric.record_count == 0) continue;
    auto it = std::find_if(partials_.begin(), partials_.end(),
                           [&](const Partial& p) { return p.name == metric.name; });
    if (it == partials_.end()) {
      partials_.push_back(Partial{metric.name, metric.reduction});
      it = partials_.end() - 1;
    } else if (it->reduction != metric.reduction) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric '", metric.name, "' changed its reduction from one batch to the next"));
    }
    Partial& p = *it;
    switch (metric.reduction) {
      case COHORT_REDUCE_MEAN:
        p.value += metric.value * static_cast<double>(metric.record_count);
        p.seen_value = true;
        break;
      case COHORT_REDUCE_SUM:
        p.value += metric.value;
        p.seen_value = true;
        break;
      case COHORT_REDUCE_MIN:
        p.value = p.seen_value ? std::min(p.value, metric.value) : metric.value;
        p.seen_value = true;
        break;
      case COHORT_REDUCE_MAX:
        p.value = p.seen_value ? std::max(p.value, metric.value) : metric.value;
        p.seen_value = true;
        break;
    }
    p.records += metric.record_count;
  }
  ++batches_;
  return absl::OkStatus();
}

std::vector<ReducedMetric> MetricAccumulator::Result() const {
  std::vector<ReducedMetric> result;
  for (const Partial& p : partials_) {
    if (!p.seen_value) continue;
    const double value =
        p.reduction == COHORT_REDUCE_MEAN ? p.value / static_cast<double>(p.records) : p.value;
    result.push_back({p.name, value});
  }
  return result;
}

void MetricAccumulator::Reset() {
  partials_.clear();
  batches_ = 0;
}

const ReducedMetric* FindMetric(const std::vector<ReducedMetric>& metrics,
                                const std::string& name) {
  for (const std::string& candidate :
       {name, absl::StartsWith(name, "validation_") ? name.substr(11) : std::string()}) {
    if (candidate.empty()) continue;
    for (const ReducedMetric& metric : metrics) {
      if (metric.name == candidate) return &metric;
    }
  }
  return nullptr;
}

}  // namespace cohort
