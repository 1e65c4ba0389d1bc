// The read-only requests about one trial and about checkpoints (cluster_queries.h): what they
// need beyond the Cluster is read from the experiment's run folder (a trial's metrics.jsonl) and
// its checkpoint storage (folder sizes, and whether each recorded checkpoint is whole there).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/orchestrator/cluster_queries.h"
#include "runtime/orchestrator/unknown_ids.h"

namespace cohort::orchestration {
namespace {

// The size of every file under `folder` together; 0 when it cannot be read.
uint64_t FolderBytes(const std::filesystem::path& folder) {
  uint64_t bytes = 0;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(folder, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    std::error_code size_error;
    if (it->is_regular_file(size_error)) {
      const uintmax_t size = it->file_size(size_error);
      if (!size_error) bytes += size;
    }
  }
  return bytes;
}

// What the experiment's checkpoint storage says of its checkpoints: the damaged ones by id, with
// what is wrong (none when the storage's folder is gone: each is then missing); nullopt when the
// storage cannot be read (nothing is then checked). Read as it is: a query changes nothing there.
std::optional<std::map<std::string, std::string>> DamagedCheckpoints(const Experiment& experiment) {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorageToRead(experiment.checkpoint_root);
  if (absl::IsNotFound(storage.status())) return std::map<std::string, std::string>{};
  if (!storage.ok()) return std::nullopt;
  absl::StatusOr<std::vector<DamagedCheckpoint>> damaged = (*storage)->ListDamaged();
  if (!damaged.ok()) return std::nullopt;
  std::map<std::string, std::string> problems;
  for (DamagedCheckpoint& checkpoint : *damaged) {
    problems[checkpoint.id] = std::move(checkpoint.problem);
  }
  return problems;
}

// Whether the checkpoint in `folder` is whole, damaged or missing, by `damaged`.
void CheckCondition(const std::optional<std::map<std::string, std::string>>& damaged,
                    const std::filesystem::path& folder, CheckpointRow& row) {
  if (!damaged) return;
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) {
    row.condition = CheckpointCondition::kMissing;
    row.problem = absl::StrCat("no folder ", folder.string());
  } else if (auto found = damaged->find(row.checkpoint_id); found != damaged->end()) {
    row.condition = CheckpointCondition::kDamaged;
    row.problem = found->second;
  } else {
    row.condition = CheckpointCondition::kWhole;
  }
}

// The checkpoints the record keeps of `trial_id`, oldest first, checked against `damaged`.
std::vector<CheckpointRow> CheckpointRowsOf(
    const Experiment& experiment, uint64_t trial_id,
    const std::optional<std::map<std::string, std::string>>& damaged) {
  std::vector<CheckpointRow> rows;
  for (const TrialRecord& record : experiment.record.trials) {
    if (record.id != trial_id) continue;
    for (const CheckpointEntry& entry : record.checkpoints) {
      CheckpointRow row;
      row.checkpoint_id = entry.id;
      row.experiment_id = experiment.id;
      row.trial_id = trial_id;
      row.batches = entry.batches;
      row.has_metric = entry.metric.has_value();
      row.metric = entry.metric.value_or(0.0);
      const std::filesystem::path folder =
          std::filesystem::path(experiment.checkpoint_root) / entry.id;
      row.path = folder.string();
      row.bytes = FolderBytes(folder);
      CheckCondition(damaged, folder, row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// The validations in the trial's metrics.jsonl, in file order (a rewind already dropped those
// trained again). Lines that do not parse are passed over.
std::vector<ValidationRow> ValidationsOf(const Experiment& experiment, uint64_t trial_id) {
  std::vector<ValidationRow> rows;
  if (!experiment.folder) return rows;
  std::ifstream file(experiment.folder->metrics_path(trial_id));
  std::string line;
  while (std::getline(file, line)) {
    // Only validation lines are parsed (a long trial has far more training reports).
    if (line.empty() || !absl::StrContains(line, "\"kind\":\"validation\"")) continue;
    absl::StatusOr<MetricsReport> report = ParseMetricsReportJson(line, trial_id);
    if (!report.ok() || report->kind != ReportKind::kValidation) continue;
    rows.push_back(ValidationRow{report->batches, std::move(report->metrics)});
  }
  return rows;
}

}  // namespace

ClientMessage DescribeTrialReply(const Cluster& cluster, const DescribeTrial& request) {
  auto found = cluster.trials.find(request.trial_id);
  if (found == cluster.trials.end()) return UnknownTrial(request.trial_id);
  const Trial& trial = *found->second;
  const Experiment& experiment = *cluster.experiments.at(trial.experiment_id);
  TrialDescription description;
  description.experiment_id = experiment.id;
  description.experiment_name = experiment.config.name;
  description.searcher_metric = experiment.config.searcher.metric;
  description.smaller_is_better = experiment.config.searcher.smaller_is_better;
  description.trial = SummarizeTrial(cluster, experiment, trial);
  description.validations = ValidationsOf(experiment, trial.id);
  description.checkpoints = CheckpointRowsOf(experiment, trial.id, DamagedCheckpoints(experiment));
  return description;
}

ClientMessage ListCheckpointsReply(const Cluster& cluster, const ListCheckpoints& request) {
  CheckpointListing listing;
  if (request.trial_id != 0) {
    auto found = cluster.trials.find(request.trial_id);
    if (found == cluster.trials.end()) return UnknownTrial(request.trial_id);
    const Trial& trial = *found->second;
    if (request.experiment_id != 0 && request.experiment_id != trial.experiment_id) {
      return ClientError{
          ClientErrorCode::kNotFound,
          absl::StrCat("no trial ", trial.id, " in experiment ", request.experiment_id,
                       " (it is experiment ", trial.experiment_id, "'s)")};
    }
    const Experiment& experiment = *cluster.experiments.at(trial.experiment_id);
    listing.checkpoints = CheckpointRowsOf(experiment, trial.id, DamagedCheckpoints(experiment));
    return listing;
  }
  auto found = cluster.experiments.find(request.experiment_id);
  if (found == cluster.experiments.end()) {
    return UnknownExperiment(request.experiment_id);
  }
  const Experiment& experiment = *found->second;
  std::vector<uint64_t> trial_ids;
  for (const auto& [request_id, trial_id] : experiment.trials) trial_ids.push_back(trial_id);
  std::sort(trial_ids.begin(), trial_ids.end());
  const std::optional<std::map<std::string, std::string>> damaged = DamagedCheckpoints(experiment);
  for (const uint64_t trial_id : trial_ids) {
    for (CheckpointRow& row : CheckpointRowsOf(experiment, trial_id, damaged)) {
      listing.checkpoints.push_back(std::move(row));
    }
  }
  return listing;
}

}  // namespace cohort::orchestration
