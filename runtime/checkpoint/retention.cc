#include "runtime/checkpoint/retention.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace cohort {
namespace {

using Records = std::vector<const CheckpointRecord*>;

bool Newer(const CheckpointRecord* a, const CheckpointRecord* b) {
  return std::tie(a->batches_trained, a->id) > std::tie(b->batches_trained, b->id);
}

bool HasMetric(const CheckpointRecord* record) {
  return record->metric.has_value() && !std::isnan(*record->metric);
}

// The first `count` records once ordered by `first`, added to `kept`.
template <class Order>
void KeepFirst(Records records, uint32_t count, Order first, std::set<std::string>& kept) {
  const size_t n = std::min<size_t>(count, records.size());
  std::partial_sort(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(n),
                    records.end(), first);
  for (size_t i = 0; i < n; ++i) kept.insert(records[i]->id);
}

}  // namespace

std::vector<std::string> CheckpointsToDelete(const std::vector<CheckpointRecord>& checkpoints,
                                             const RetentionPolicy& policy) {
  // Equal metrics rank as the record's best does (ExperimentRecord::BestTrial, BestCheckpoint):
  // the lower trial id, then the checkpoint that reached the metric first.
  const auto better = [&policy](const CheckpointRecord* a, const CheckpointRecord* b) {
    if (*a->metric != *b->metric) {
      return policy.smaller_is_better ? *a->metric < *b->metric : *a->metric > *b->metric;
    }
    return std::tie(a->trial_id, a->batches_trained, a->id) <
           std::tie(b->trial_id, b->batches_trained, b->id);
  };
  std::map<uint64_t, Records> by_trial;
  std::map<uint64_t, Records> with_metric_by_trial;
  Records with_metric;
  for (const CheckpointRecord& record : checkpoints) {
    by_trial[record.trial_id].push_back(&record);
    if (!HasMetric(&record)) continue;
    with_metric_by_trial[record.trial_id].push_back(&record);
    with_metric.push_back(&record);
  }

  std::set<std::string> kept;
  for (const auto& [trial, records] : by_trial)
    KeepFirst(records, policy.save_trial_latest, Newer, kept);
  for (const auto& [trial, records] : with_metric_by_trial) {
    KeepFirst(records, policy.save_trial_best, better, kept);
  }
  KeepFirst(with_metric, policy.save_experiment_best, better, kept);

  Records doomed;
  for (const CheckpointRecord& record : checkpoints) {
    if (!kept.count(record.id)) doomed.push_back(&record);
  }
  std::sort(doomed.begin(), doomed.end(), [](const CheckpointRecord* a, const CheckpointRecord* b) {
    return std::tie(a->trial_id, a->batches_trained, a->id) <
           std::tie(b->trial_id, b->batches_trained, b->id);
  });
  std::vector<std::string> ids;
  std::set<std::string> listed;
  for (const CheckpointRecord* record : doomed) {
    if (listed.insert(record->id).second) ids.push_back(record->id);
  }
  return ids;
}

}  // namespace cohort
