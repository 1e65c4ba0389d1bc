#include "runtime/record/trial_resume.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace cohort {

absl::StatusOr<ResumePoint> ResumeTrialRecord(const std::string& metrics_path, uint64_t trial_id,
                                              const CheckpointStorage& storage,
                                              ExperimentRecord* record) {
  ResumePoint point;
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(storage, trial_id);
  if (latest.ok()) {
    point = {latest->id, latest->batches_trained};
  } else if (!absl::IsNotFound(latest.status())) {
    return latest.status();
  }
  absl::StatusOr<std::vector<CheckpointInfo>> stored = storage.List();
  if (!stored.ok()) return stored.status();
  absl::StatusOr<std::vector<MetricsReport>> kept =
      TrimMetricsFile(metrics_path, trial_id, point.batches);
  if (!kept.ok()) return kept.status();

  TrialRecord& trial = record->trial(trial_id);
  TrialRecord fresh;
  fresh.id = trial_id;
  fresh.restarts = trial.restarts;
  fresh.hyperparameters_json = std::move(trial.hyperparameters_json);
  trial = std::move(fresh);
  std::map<uint64_t, MetricsReport> validations;
  for (const MetricsReport& report : *kept) {
    record->Apply(report);
    if (report.kind == ReportKind::kValidation) validations[report.batches] = report;
  }
  TrialRecord& rebuilt = record->trial(trial_id);
  for (const CheckpointInfo& info : *stored) {
    if (info.trial_id != trial_id || info.batches_trained > point.batches) continue;
    CheckpointEntry entry{info.id, info.batches_trained, std::nullopt};
    if (auto v = validations.find(info.batches_trained); v != validations.end()) {
      entry.metric = record->SearcherMetricOf(v->second);
    }
    rebuilt.checkpoints.push_back(std::move(entry));
  }
  rebuilt.batches_trained = point.batches;
  return point;
}

}  // namespace cohort
