#include "runtime/plugin/metric_accumulator.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

// `so_far` (when `has_value`) and `more` as `reduction` combines them: MEAN's weighted sums and
// SUM's sums add, MIN and MAX pick.
double Combine(cohort_reduction reduction, bool has_value, double so_far, double more) {
  if (!has_value) return more;
  switch (reduction) {
    case COHORT_REDUCE_MIN:
      return std::min(so_far, more);
    case COHORT_REDUCE_MAX:
      return std::max(so_far, more);
    case COHORT_REDUCE_MEAN:
    case COHORT_REDUCE_SUM:
      break;
  }
  return so_far + more;
}

}  // namespace

absl::Status MetricAccumulator::Add(const BatchMetrics& batch) {
  for (const Metric& metric : batch.metrics) {
    auto it = std::find_if(partials_.begin(), partials_.end(),
                           [&](const Partial& p) { return p.name == metric.name; });
    if (it == partials_.end()) {
      partials_.push_back(Partial{metric.name, metric.reduction});
      it = partials_.end() - 1;
    } else if (it->reduction != metric.reduction) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric '", metric.name, "' changed its reduction from one batch to the next"));
    }
    // A batch without records (a rank's empty share of a batch) names its metrics, no more.
    if (metric.record_count == 0) continue;
    Partial& p = *it;
    p.value = Combine(p.reduction, p.records > 0, p.value,
                      metric.reduction == COHORT_REDUCE_MEAN
                          ? metric.value * static_cast<double>(metric.record_count)
                          : metric.value);
    p.records += metric.record_count;
  }
  ++batches_;
  return absl::OkStatus();
}

std::vector<ReducedMetric> MetricAccumulator::Result() const {
  std::vector<ReducedMetric> result;
  for (const Partial& p : partials_) {
    if (p.records == 0) continue;
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
    } else if (records > 0) {  // a rank whose batches were all empty adds nothing
      p.value = Combine(p.reduction, p.records > 0, p.value, value);
      p.records += records;
    }
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

namespace {

// The index of the first of `count` names (`name_at(i)`) that `name` finds: its exact match, else
// the name without Determined's "validation_" prefix; `count` when none.
template <typename NameAt>
size_t FindName(size_t count, NameAt name_at, const std::string& name) {
  for (const std::string& candidate :
       {name, absl::StartsWith(name, "validation_") ? name.substr(11) : std::string()}) {
    if (candidate.empty()) continue;
    for (size_t i = 0; i < count; ++i) {
      if (name_at(i) == candidate) return i;
    }
  }
  return count;
}

}  // namespace

const ReducedMetric* FindMetric(const std::vector<ReducedMetric>& metrics,
                                const std::string& name) {
  const size_t i = FindName(
      metrics.size(), [&](size_t k) -> const std::string& { return metrics[k].name; }, name);
  return i < metrics.size() ? &metrics[i] : nullptr;
}

std::vector<std::string> MetricNames(const std::vector<ReducedMetric>& metrics) {
  std::vector<std::string> names;
  for (const ReducedMetric& metric : metrics) names.push_back(metric.name);
  return names;
}

bool NamesMetric(const std::vector<std::string>& names, const std::string& name) {
  return FindName(
             names.size(), [&](size_t k) -> const std::string& { return names[k]; }, name) <
         names.size();
}

}  // namespace cohort
