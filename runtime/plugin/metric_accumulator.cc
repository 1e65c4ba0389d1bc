#include "runtime/plugin/metric_accumulator.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

std::vector<size_t> MetricAccumulator::ByName() const {
  std::vector<size_t> order(partials_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return partials_[a].name < partials_[b].name; });
  return order;
}

std::vector<std::string> MetricAccumulator::Names() const {
  std::vector<std::string> names;
  for (const size_t i : ByName()) names.push_back(partials_[i].name);
  return names;
}

std::vector<double> MetricAccumulator::Packed() const {
  std::vector<double> packed;
  for (const size_t i : ByName()) {
    const Partial& p = partials_[i];
    packed.push_back(static_cast<double>(p.reduction));
    packed.push_back(p.value);
    packed.push_back(static_cast<double>(p.records));
  }
  return packed;
}

absl::Status MetricAccumulator::MergePacked(const std::vector<double>& packed, bool replace) {
  if (packed.size() != partials_.size() * 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks reported different metrics: ", partials_.size(), " here, ",
                     packed.size() / 3, " on another rank"));
  }
  const std::vector<size_t> by_name = ByName();
  for (size_t i = 0; i < by_name.size(); ++i) {
    Partial& p = partials_[by_name[i]];
    if (static_cast<double>(p.reduction) != packed[3 * i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric '", p.name, "' has another reduction on another rank"));
    }
    const double value = packed[3 * i + 1];
    const uint64_t records = static_cast<uint64_t>(packed[3 * i + 2]);
    if (replace) {
      p.value = value;
      p.records = records;
      continue;
    }
    switch (p.reduction) {
      case COHORT_REDUCE_MEAN:
      case COHORT_REDUCE_SUM:
        p.value += value;
        break;
      case COHORT_REDUCE_MIN:
        p.value = std::min(p.value, value);
        break;
      case COHORT_REDUCE_MAX:
        p.value = std::max(p.value, value);
        break;
    }
    p.records += records;
  }
  return absl::OkStatus();
}

void MetricAccumulator::Reset() {
  partials_.clear();
  batches_ = 0;
}

namespace {

// "accuracy, loss", in name order; "no metrics" for none.
std::string NamesOf(const BatchMetrics& batch) {
  std::vector<std::string> names;
  for (const Metric& metric : batch.metrics) names.push_back(metric.name);
  std::sort(names.begin(), names.end());
  return names.empty() ? "no metrics" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<MetricAccumulator> AccumulateValidation(const std::vector<BatchMetrics>& batches,
                                                       std::optional<std::string>* uneven) {
  MetricAccumulator total;
  const std::string first = batches.empty() ? "" : NamesOf(batches[0]);
  for (size_t k = 0; k < batches.size(); ++k) {
    if (k > 0 && !*uneven && NamesOf(batches[k]) != first) {
      *uneven =
          absl::StrCat("evaluate_batch reported ", NamesOf(batches[k]), " for validation batch ",
                       k + 1, " of ", batches.size(), ", but ", first,
                       " for the first: a metric a batch leaves out is over the other "
                       "batches' records alone (an empty batch reports its metrics with "
                       "record count 0)");
    }
    if (absl::Status status = total.Add(batches[k]); !status.ok()) return status;
  }
  return total;
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
