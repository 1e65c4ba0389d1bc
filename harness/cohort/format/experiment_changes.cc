#include "harness/cohort/format/experiment_changes.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/cohort/format/experiment_format.h"

namespace cohort {
namespace {

// "trial 7 <state>" with what matters for that state, in experiment `now`.
std::string TrialStateLine(const TrialSummary& trial, const ExperimentDescription& now) {
  const std::string& metric = now.searcher_metric;
  std::string line = absl::StrCat("trial ", trial.trial_id, " ", TrialStateName(trial.state));
  switch (trial.state) {
    case TrialState::kPaused:
    case TrialState::kStopped:
    case TrialState::kCompleted:
      absl::StrAppend(&line, " after ", trial.batches_trained, " batches");
      if (trial.has_best_metric) {
        absl::StrAppendFormat(&line, ", best %s %.6g", metric.empty() ? "metric" : metric,
                              trial.best_metric);
      }
      // Paused is a trial at its rung (trained what it was asked, not stopped by anyone), or one
      // its experiment's pause stopped.
      if (trial.state == TrialState::kPaused && now.summary.state == ExperimentState::kPaused) {
        absl::StrAppend(&line, "; paused with its experiment (`cohort experiment activate ",
                        now.summary.experiment_id, "` lets it go on)");
      } else if (trial.state == TrialState::kPaused) {
        absl::StrAppend(&line, "; waiting for the searcher to promote or close it");
      }
      break;
    case TrialState::kError:
      if (!trial.error.empty()) absl::StrAppend(&line, ": ", trial.error);
      break;
    case TrialState::kQueued:
    case TrialState::kRunning:
      break;
  }
  return line;
}

std::string ValidationLine(uint64_t trial_id, uint64_t batches,
                           const std::vector<NamedValue>& metrics) {
  std::string line = absl::StrCat("trial ", trial_id, " validation");
  if (batches > 0) absl::StrAppend(&line, " after ", batches, " batches");
  return absl::StrCat(line, ": ", FormatMetrics(metrics));
}

// The trial's new training and validation metrics since `previous` (nullptr: none seen), in the
// order of their batches: the latest training report among the validations it came between (a
// validation after batch N follows the training report of batch N).
void AppendNewMetrics(const TrialSummary& trial, const TrialSummary* previous,
                      const TrialValidations& validations, std::vector<std::string>& lines) {
  std::vector<std::pair<uint64_t, std::string>> validated;  // (batches, line), ascending
  if (!trial.latest_validation.empty() &&
      (previous == nullptr || trial.latest_validation != previous->latest_validation)) {
    // Validations reported between the two descriptions (a fast trial's) are asked for; after a
    // rewind (a restart from a checkpoint) the latest is the one news.
    const uint64_t seen = previous == nullptr ? 0 : previous->latest_validation_batches;
    const uint64_t latest = trial.latest_validation_batches;
    bool reached_latest = false;
    if (validations && latest > seen) {
      for (const ValidationRow& row : validations(trial.trial_id)) {
        if (row.batches <= seen || row.batches > latest) continue;
        validated.emplace_back(row.batches,
                               ValidationLine(trial.trial_id, row.batches, row.metrics));
        reached_latest = row.batches == latest;
      }
    }
    if (!reached_latest) {
      validated.emplace_back(latest,
                             ValidationLine(trial.trial_id, latest, trial.latest_validation));
    }
  }
  size_t next = 0;
  if (!trial.latest_training.empty() &&
      (previous == nullptr || trial.latest_training != previous->latest_training)) {
    // The report's own batch (an older orchestrator sends none: the trial's progress then).
    const uint64_t batches =
        trial.latest_training_batches > 0 ? trial.latest_training_batches : trial.batches_trained;
    // A validation of unknown batches (0: an older orchestrator's) comes after it, as it stands.
    for (; next < validated.size() && validated[next].first > 0 && validated[next].first < batches;
         ++next) {
      lines.push_back(std::move(validated[next].second));
    }
    std::string line = absl::StrCat("trial ", trial.trial_id, " at batch ", batches);
    if (trial.target_batches > 0) absl::StrAppend(&line, "/", trial.target_batches);
    absl::StrAppend(&line, ": ", FormatMetrics(trial.latest_training));
    if (trial.records_per_second > 0) {
      absl::StrAppendFormat(&line, " (%.0f records/s)", trial.records_per_second);
    }
    lines.push_back(std::move(line));
  }
  for (; next < validated.size(); ++next) lines.push_back(std::move(validated[next].second));
}

// "experiment 3 completed, best trial 7 (...)"; an ended experiment names its best trial.
std::string ExperimentStateLine(const ExperimentDescription& description) {
  const ExperimentSummary& summary = description.summary;
  std::string line =
      absl::StrCat("experiment ", summary.experiment_id, " ", ExperimentStateName(summary.state));
  if (summary.state == ExperimentState::kError && !summary.error.empty()) {
    absl::StrAppend(&line, ": ", summary.error);
  }
  if (ExperimentEnded(summary.state)) {
    if (const std::string best = BestTrial(description); best != "-") {
      absl::StrAppend(&line, summary.state == ExperimentState::kError ? "; " : ", ", "best trial ",
                      best);
    }
  }
  return line;
}

}  // namespace

std::vector<std::string> ExperimentChanges(const ExperimentDescription* before,
                                           const ExperimentDescription& now,
                                           const TrialValidations& validations) {
  std::map<uint64_t, const TrialSummary*> known;
  if (before != nullptr) {
    for (const TrialSummary& trial : before->trials) known[trial.trial_id] = &trial;
  }
  std::vector<std::string> lines;
  for (const TrialSummary& trial : now.trials) {
    const auto found = known.find(trial.trial_id);
    if (found == known.end()) {
      // A trial first seen past running (it trained between two looks) is named first, its
      // metrics next and the state they led to last, in the order they happened.
      const bool went_on =
          trial.state != TrialState::kQueued && trial.state != TrialState::kRunning;
      std::string line =
          went_on ? absl::StrCat("trial ", trial.trial_id) : TrialStateLine(trial, now);
      if (!trial.hyperparameters_json.empty()) {
        absl::StrAppend(&line, went_on ? " " : ", ", "hyperparameters ",
                        trial.hyperparameters_json);
      }
      lines.push_back(std::move(line));
      AppendNewMetrics(trial, nullptr, validations, lines);
      if (went_on) lines.push_back(TrialStateLine(trial, now));
      continue;
    }
    const TrialSummary& previous = *found->second;
    if (trial.restarts > previous.restarts) {
      std::string line = absl::StrCat("trial ", trial.trial_id, " restart ", trial.restarts);
      if (!trial.error.empty()) absl::StrAppend(&line, ": ", trial.error);
      lines.push_back(std::move(line));
    }
    AppendNewMetrics(trial, &previous, validations, lines);
    if (trial.state != previous.state) lines.push_back(TrialStateLine(trial, now));
  }
  const ExperimentState previous_state =
      before != nullptr ? before->summary.state : ExperimentState::kActive;
  if (now.summary.state != previous_state) lines.push_back(ExperimentStateLine(now));
  return lines;
}

int ExitStatusForEnded(ExperimentState state) {
  switch (state) {
    case ExperimentState::kCompleted:
      return 0;
    case ExperimentState::kStopped:
      return 130;
    case ExperimentState::kActive:
    case ExperimentState::kStopping:
    case ExperimentState::kPaused:
    case ExperimentState::kError:
      break;
  }
  return 1;
}

}  // namespace cohort
