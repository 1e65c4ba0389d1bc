#include "harness/cohort/format/trial_format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/cohort/format/experiment_format.h"
#include "harness/cohort/format/text_table.h"
#include "runtime/base/metric_order.h"

namespace cohort {
namespace {

std::string MetricOrDash(const CheckpointRow& row) {
  return row.has_metric ? absl::StrFormat("%.6g", row.metric) : "-";
}

// The validations as a table, a column per metric in the order they first appear.
std::string ValidationTable(const std::vector<ValidationRow>& validations) {
  std::vector<std::string> names;
  for (const ValidationRow& row : validations) {
    for (const NamedValue& metric : row.metrics) {
      if (std::find(names.begin(), names.end(), metric.name) == names.end()) {
        names.push_back(metric.name);
      }
    }
  }
  std::vector<std::string> header = {"BATCHES"};
  header.insert(header.end(), names.begin(), names.end());
  TextTable table(std::move(header));
  for (const ValidationRow& row : validations) {
    std::vector<std::string> cells = {absl::StrCat(row.batches)};
    for (const std::string& name : names) {
      auto found = std::find_if(row.metrics.begin(), row.metrics.end(),
                                [&name](const NamedValue& metric) { return metric.name == name; });
      cells.push_back(found == row.metrics.end() ? "-" : absl::StrFormat("%.6g", found->value));
    }
    table.AddRow(std::move(cells));
  }
  return table.Render();
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1000) return absl::StrCat(bytes, " B");
  const char* units[] = {"KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes) / 1000;
  size_t unit = 0;
  while (value >= 1000 && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  const int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;  // three significant digits
  return absl::StrFormat("%.*f %s", decimals, value, units[unit]);
}

CheckpointListing BestCheckpoints(const CheckpointListing& listing, bool smaller_is_better,
                                  size_t count) {
  CheckpointListing best;
  for (const CheckpointRow& row : listing.checkpoints) {
    const bool usable = row.condition != CheckpointCondition::kDamaged &&
                        row.condition != CheckpointCondition::kMissing;
    if (usable && row.has_metric && !std::isnan(row.metric)) best.checkpoints.push_back(row);
  }
  // Without NaNs, IsBetterMetric is a strict order: equals keep the listing's order.
  std::stable_sort(best.checkpoints.begin(), best.checkpoints.end(),
                   [smaller_is_better](const CheckpointRow& a, const CheckpointRow& b) {
                     return IsBetterMetric(a.metric, b.metric, smaller_is_better);
                   });
  if (best.checkpoints.size() > count) best.checkpoints.resize(count);
  return best;
}

std::string FormatTrialDescription(const TrialDescription& description) {
  const TrialSummary& trial = description.trial;
  std::string out = absl::StrFormat("trial %d (experiment %d: %s)\n", trial.trial_id,
                                    description.experiment_id, description.experiment_name);
  AppendField("state", TrialStateName(trial.state), &out);
  AppendField("batches", absl::StrCat(trial.batches_trained, "/", trial.target_batches), &out);
  AppendField("restarts", absl::StrCat(trial.restarts), &out);
  AppendField("hyperparameters",
              trial.hyperparameters_json.empty() ? "-" : trial.hyperparameters_json, &out);
  if (trial.has_best_metric) {
    AppendField(
        absl::StrCat("best ", description.searcher_metric.empty() ? std::string("metric")
                                                                  : description.searcher_metric),
        absl::StrCat(
            absl::StrFormat("%.6g", trial.best_metric),
            trial.best_metric_batches > 0
                ? absl::StrCat(" after ", trial.best_metric_batches, " batches")
                : "",
            description.smaller_is_better ? " (smaller is better)" : " (larger is better)"),
        &out);
  }
  if (!trial.best_checkpoint_id.empty()) {
    AppendField("best checkpoint", trial.best_checkpoint_id, &out);
  }
  if (!trial.latest_checkpoint_id.empty()) {
    AppendField("last checkpoint", trial.latest_checkpoint_id, &out);
  }
  AppendField("latest training", FormatMetrics(trial.latest_training), &out);
  if (trial.scaled_learning_rate > 0) {
    AppendField("learning rate",
                absl::StrFormat("%g (scaled to its slots)", trial.scaled_learning_rate), &out);
  }
  if (trial.records_per_second > 0) {
    AppendField("throughput", absl::StrFormat("%.0f records/s", trial.records_per_second), &out);
  }
  if (trial.task_id != 0) AppendField("task", absl::StrCat(trial.task_id), &out);
  if (!trial.error.empty()) AppendField("error", trial.error, &out);
  if (!trial.latest_ranks.empty()) {
    out += "\nranks' pace since the previous training report (straggler scores):\n";
    TextTable table({"RANK", "STEP/BATCH", "IN PLUGIN", "VS FASTEST", "VS OWN BEST"});
    for (const RankPace& pace : trial.latest_ranks) {
      table.AddRow({absl::StrCat(pace.rank), absl::StrFormat("%.3g s", pace.step_seconds),
                    absl::StrFormat("%.3g s", pace.compute_seconds),
                    absl::StrFormat("%.2f", pace.vs_fastest),
                    absl::StrFormat("%.2f", pace.vs_best)});
    }
    out += table.Render();
  }
  out += "\nvalidations:\n";
  out += description.validations.empty() ? "none yet\n" : ValidationTable(description.validations);
  out += "\ncheckpoints:\n";
  out += FormatCheckpointListing(CheckpointListing{description.checkpoints});
  return out;
}

std::string FormatCheckpointListing(const CheckpointListing& listing) {
  if (listing.checkpoints.empty()) return "no checkpoints\n";
  TextTable table({"CHECKPOINT", "TRIAL", "BATCHES", "METRIC", "SIZE", "STATE", "PATH"});
  std::string problems;
  for (const CheckpointRow& row : listing.checkpoints) {
    table.AddRow({row.checkpoint_id, absl::StrCat(row.trial_id), absl::StrCat(row.batches),
                  MetricOrDash(row), FormatBytes(row.bytes),
                  std::string(CheckpointConditionName(row.condition)), row.path});
    if (!row.problem.empty()) {
      absl::StrAppend(&problems, row.checkpoint_id, " is ", CheckpointConditionName(row.condition),
                      ": ", row.problem, "\n");
    }
  }
  if (!problems.empty()) {
    absl::StrAppend(&problems,
                    "a resume or restart passes over these, going on from the newest "
                    "whole checkpoint before them\n");
  }
  return table.Render() + problems;
}

}  // namespace cohort
