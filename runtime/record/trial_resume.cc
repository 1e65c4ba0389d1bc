#include "runtime/record/trial_resume.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/checkpoint_names.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/record/tensorboard_events.h"

namespace cohort {
absl::StatusOr<std::vector<MetricsReport>> RewindTrialRecord(const std::string& metrics_path,
                                                             uint64_t trial_id, uint64_t batches,
                                                             ExperimentRecord* record,
                                                             uint64_t* reported_batches) {
  record->RewindTrial(trial_id, batches);
  absl::StatusOr<std::vector<MetricsReport>> kept =
      TrimMetricsFile(metrics_path, trial_id, batches, reported_batches);
  if (!kept.ok()) return kept.status();
  for (const MetricsReport& report : *kept) record->Apply(report);
  return kept;
}

absl::StatusOr<ResumePoint> ResumeTrialRecord(const std::string& metrics_path, uint64_t trial_id,
                                              const CheckpointStorage& storage,
                                              ExperimentRecord* record) {
  ResumePoint point;
  absl::StatusOr<CheckpointInfo> latest = LatestCheckpoint(storage, trial_id);
  if (latest.ok()) {
    point.checkpoint_id = latest->id;
    point.batches = latest->batches_trained;
  } else if (!absl::IsNotFound(latest.status())) {
    return latest.status();
  }
  absl::StatusOr<std::vector<CheckpointInfo>> stored = storage.List();
  if (!stored.ok()) return stored.status();
  absl::StatusOr<std::vector<DamagedCheckpoint>> damaged = storage.ListDamaged();
  if (!damaged.ok()) return damaged.status();
  for (const DamagedCheckpoint& checkpoint : *damaged) {
    const std::optional<CheckpointIdParts> parts = PartsOf(checkpoint);
    if (!parts || parts->trial_id != trial_id || parts->batches <= point.batches) continue;
    point.warnings.push_back(
        absl::StrCat("warning: checkpoint ", checkpoint.id, " of trial ", trial_id, " is damaged (",
                     checkpoint.problem, "); trial ", trial_id, " resumes from ",
                     point.checkpoint_id.empty() ? std::string("the start") : point.checkpoint_id));
  }

  TrialRecord& trial = record->trial(trial_id);
  // Trained batches with nothing to go on from (a damaged checkpoint was named above) are trained
  // again: said below, since the user may have meant the run to go on.
  const bool nothing_to_go_on = point.checkpoint_id.empty() && point.warnings.empty();
  const uint64_t recorded_batches = trial.batches_trained;
  TrialRecord fresh;
  fresh.id = trial_id;
  fresh.restarts = trial.restarts;
  fresh.hyperparameters_json = std::move(trial.hyperparameters_json);
  trial = std::move(fresh);
  uint64_t reported_batches = 0;
  absl::StatusOr<std::vector<MetricsReport>> kept =
      RewindTrialRecord(metrics_path, trial_id, point.batches, record, &reported_batches);
  if (!kept.ok()) return kept.status();
  // The record may be a fresh one (`cohort run --resume`): the metrics file says what the trial
  // trained then.
  if (const uint64_t trained = std::max(recorded_batches, reported_batches);
      nothing_to_go_on && trained > 0) {
    point.warnings.push_back(absl::StrCat(
        "warning: trial ", trial_id, " had trained ", trained,
        " batches but keeps no checkpoint (none was written yet, or checkpoint_storage's "
        "save_trial_latest and save_trial_best keep none); it trains again from batch 0"));
  }
  // Each checkpoint up to the resume point, with the searcher metric validated at its batch.
  std::map<uint64_t, std::optional<double>> metric_at;
  for (const MetricsReport& report : *kept) {
    if (report.kind == ReportKind::kValidation) {
      metric_at[report.batches] = record->SearcherMetricOf(report);
    }
  }
  TrialRecord& rebuilt = record->trial(trial_id);
  for (const CheckpointInfo& info : *stored) {
    if (info.trial_id != trial_id || info.batches_trained > point.batches) continue;
    auto metric = metric_at.find(info.batches_trained);
    rebuilt.checkpoints.push_back(CheckpointEntry{
        info.id, info.batches_trained, metric == metric_at.end() ? std::nullopt : metric->second});
  }
  rebuilt.batches_trained = point.batches;
  point.kept_reports = *std::move(kept);
  return point;
}

namespace {

// The trial's TensorBoard events become `kept`; a warning line when they cannot be written.
std::optional<std::string> RewriteTensorBoardEvents(const RunFolder& folder, uint64_t trial_id,
                                                    const std::vector<MetricsReport>& kept) {
  const std::string path = folder.tensorboard_path(trial_id);
  if (kept.empty() && !std::filesystem::exists(path)) return std::nullopt;
  if (absl::Status written = WriteTensorBoardReports(path, kept); !written.ok()) {
    return absl::StrCat("warning: ", written.message());
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> RewindTrialFiles(const RunFolder& folder, uint64_t trial_id,
                                          uint64_t batches, ExperimentRecord* record) {
  absl::StatusOr<std::vector<MetricsReport>> kept =
      RewindTrialRecord(folder.metrics_path(trial_id), trial_id, batches, record);
  if (!kept.ok()) return {absl::StrCat("warning: ", kept.status().message())};
  if (std::optional<std::string> warning = RewriteTensorBoardEvents(folder, trial_id, *kept)) {
    return {*std::move(warning)};
  }
  return {};
}

absl::StatusOr<ResumePoint> ResumeTrialFiles(const RunFolder& folder, uint64_t trial_id,
                                             const std::string& checkpoint_root,
                                             ExperimentRecord* record) {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage = OpenSharedFsStorage(checkpoint_root);
  if (!storage.ok()) return storage.status();
  absl::StatusOr<ResumePoint> point =
      ResumeTrialRecord(folder.metrics_path(trial_id), trial_id, **storage, record);
  if (!point.ok()) return point;
  if (std::optional<std::string> warning =
          RewriteTensorBoardEvents(folder, trial_id, point->kept_reports)) {
    point->warnings.push_back(*std::move(warning));
  }
  return point;
}

}  // namespace cohort
