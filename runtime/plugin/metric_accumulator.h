// MetricAccumulator: combines the metrics of many batches into one value per metric, honouring
// each metric's reduction: MEAN is weighted by record count, SUM adds, MIN and MAX pick.
//
//   MetricAccumulator total;
//   total.Add(batch_metrics);              // once per batch
//   std::vector<ReducedMetric> m = total.Result();
//
// A metric must keep its reduction from batch to batch (INVALID_ARGUMENT names it otherwise). A
// metric reported with zero records (an empty batch) adds no value whatever its reduction, but its
// name counts (Names, Packed), so a rank whose share of a validation is empty still merges with the
// others; a metric whose batches all had zero records has no value and is left out of Result().
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_PLUGIN_METRIC_ACCUMULATOR_H_
#define COHORT_RUNTIME_PLUGIN_METRIC_ACCUMULATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/plugin/batch_metrics.h"

namespace cohort {

struct ReducedMetric {
  std::string name;
  double value;
};

class MetricAccumulator {
 public:
  absl::Status Add(const BatchMetrics& batch);
  // One value per metric, in the order metrics were first seen.
  std::vector<ReducedMetric> Result() const;
  uint64_t batches() const { return batches_; }
  void Reset();

  // The partial sums as numbers, for combining ranks: three per metric (reduction, value, records)
  // in the order of the metrics' names, so ranks that saw their metrics in different orders agree.
  std::vector<double> Packed() const;
  // Folds another rank's Packed() into this one (or, with `replace`, takes its values instead);
  // INVALID_ARGUMENT unless both hold as many metrics with the same reductions. That they hold
  // the same names is for the caller to check (Names).
  absl::Status MergePacked(const std::vector<double>& packed, bool replace = false);
  // The metrics' names in the order of Packed().
  std::vector<std::string> Names() const;

 private:
  struct Partial {
    std::string name;
    cohort_reduction reduction;
    double value = 0;  // weighted sum (MEAN), sum, min or max
    uint64_t records = 0;  // no value until some
  };
  // Indices into partials_ in the order of their names.
  std::vector<size_t> ByName() const;

  std::vector<Partial> partials_;
  uint64_t batches_ = 0;
};

// The metrics of a validation's batches combined, as MetricAccumulator::Add combines them. When a
// batch reports other metric names than the first one does, `*uneven` says so, for the first such
// batch ("evaluate_batch reported loss for validation batch 3 of 4, but accuracy, loss for the
// first: ..."), counting from 1: a metric a batch leaves out is over the other batches' records
// alone.
absl::StatusOr<MetricAccumulator> AccumulateValidation(const std::vector<BatchMetrics>& batches,
                                                       std::optional<std::string>* uneven);

// Looks up `name` in `metrics`, also accepting Determined's "validation_" prefix on a name the
// plugin reports without it ("validation_loss" finds "loss"). nullptr when absent.
const ReducedMetric* FindMetric(const std::vector<ReducedMetric>& metrics, const std::string& name);
// The names of `metrics`, in their order.
std::vector<std::string> MetricNames(const std::vector<ReducedMetric>& metrics);
// Whether FindMetric would find `name` among metrics of these names.
bool NamesMetric(const std::vector<std::string>& names, const std::string& name);

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_METRIC_ACCUMULATOR_H_
