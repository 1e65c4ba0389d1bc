#include "harness/cohort/format/experiment_format.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/cohort/format/experiment_changes.h"
#include "harness/cohort/format/text_table.h"
#include "harness/cohort/run/progress_display.h"

namespace cohort {
namespace {

std::string TrialCounts(const ExperimentSummary& summary) {
  return absl::StrCat(summary.active_trials, "/", summary.completed_trials, "/",
                      StoppedTrials(summary), "/", summary.errored_trials);
}

std::string SummaryLines(const ExperimentDescription& description, double now_unix_time) {
  const ExperimentSummary& summary = description.summary;
  std::string out = absl::StrFormat("experiment %d: %s\n", summary.experiment_id, summary.name);
  AppendField("state", ExperimentStateName(summary.state), &out);
  std::string searcher = summary.searcher;
  if (!description.searcher_metric.empty()) {
    absl::StrAppend(&searcher, ", metric ", description.searcher_metric,
                    description.smaller_is_better ? " (smaller is better)" : " (larger is better)");
  }
  AppendField("searcher", searcher, &out);
  AppendField("progress", FormatProgress(summary.progress), &out);
  AppendField("trials",
              absl::StrFormat("%d: %d active, %d completed, %d stopped, %d errored", summary.trials,
                              summary.active_trials, summary.completed_trials,
                              StoppedTrials(summary), summary.errored_trials),
              &out);
  AppendField("best trial", BestTrial(description), &out);
  AppendField("slots per trial", absl::StrCat(summary.slots_per_trial), &out);
  AppendField("submitted", FormatUnixTime(summary.submitted_unix_time), &out);
  const bool ended = ExperimentEnded(summary.state) && summary.ended_unix_time > 0;
  if (ended) AppendField("ended", FormatUnixTime(summary.ended_unix_time), &out);
  if (summary.submitted_unix_time > 0) {
    const double end = ended ? summary.ended_unix_time : now_unix_time;
    AppendField("duration", FormatDuration(std::max(0.0, end - summary.submitted_unix_time)), &out);
  }
  if (!summary.error.empty()) AppendField("error", summary.error, &out);
  return out;
}

std::string TrialTable(const std::vector<TrialSummary>& trials) {
  TextTable table({"TRIAL", "STATE", "BATCHES", "RESTARTS", "BEST-METRIC", "BEST-CHECKPOINT",
                   "LATEST-CHECKPOINT", "HYPERPARAMETERS"});
  for (const TrialSummary& trial : trials) {
    table.AddRow({
        absl::StrCat(trial.trial_id),
        std::string(TrialStateName(trial.state)),
        absl::StrCat(trial.batches_trained, "/", trial.target_batches),
        absl::StrCat(trial.restarts),
        trial.has_best_metric ? absl::StrFormat("%.6g", trial.best_metric) : "-",
        trial.best_checkpoint_id.empty() ? "-" : trial.best_checkpoint_id,
        trial.latest_checkpoint_id.empty() ? "-" : trial.latest_checkpoint_id,
        trial.hyperparameters_json.empty() ? "-" : trial.hyperparameters_json,
    });
  }
  return table.Render();
}

}  // namespace

std::string BestTrial(const ExperimentDescription& description) {
  const TrialSummary* best = nullptr;
  for (const TrialSummary& trial : description.trials) {
    if (!trial.has_best_metric) continue;
    const bool better =
        best == nullptr || (description.smaller_is_better ? trial.best_metric < best->best_metric
                                                          : trial.best_metric > best->best_metric);
    if (better) best = &trial;
  }
  if (best == nullptr) return "-";
  std::string text =
      absl::StrFormat("%d (%s %.6g", best->trial_id,
                      description.searcher_metric.empty() ? "metric" : description.searcher_metric,
                      best->best_metric);
  // An orchestrator before client minor 8 tells neither the batches nor the best checkpoint.
  if (best->best_metric_batches > 0) {
    absl::StrAppend(&text, " after ", best->best_metric_batches, " batches");
  }
  if (!best->best_checkpoint_id.empty()) {
    absl::StrAppend(&text, ", checkpoint ", best->best_checkpoint_id);
  }
  return text + ")";
}

void AppendField(absl::string_view label, absl::string_view value, std::string* out) {
  absl::StrAppendFormat(out, "  %-16s %s\n", label, value);
}

uint32_t StoppedTrials(const ExperimentSummary& summary) {
  const uint64_t counted =
      uint64_t{summary.active_trials} + summary.completed_trials + summary.errored_trials;
  return summary.trials > counted ? static_cast<uint32_t>(summary.trials - counted) : 0;
}

std::string FormatUnixTime(double unix_time) {
  if (!(unix_time > 0) || !std::isfinite(unix_time)) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_time);
  std::tm local = {};
  if (localtime_r(&seconds, &local) == nullptr) return "-";
  char text[32];
  if (std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &local) == 0) return "-";
  return text;
}

std::string FormatProgress(double fraction) {
  if (!std::isfinite(fraction)) return "?";
  const double percent = std::floor(std::clamp(fraction, 0.0, 1.0) * 100);
  return absl::StrCat(static_cast<int>(percent), "%");
}

std::string FormatMetrics(const std::vector<NamedValue>& metrics) {
  if (metrics.empty()) return "-";
  return absl::StrJoin(metrics, " ", [](std::string* out, const NamedValue& metric) {
    absl::StrAppendFormat(out, "%s=%.6g", metric.name, metric.value);
  });
}

std::string FormatExperimentList(const ExperimentList& list) {
  // A list with archived experiments (--all) marks them in a column of their own, as det does.
  const bool any_archived =
      std::any_of(list.experiments.begin(), list.experiments.end(),
                  [](const ExperimentSummary& experiment) { return experiment.archived; });
  std::vector<std::string> header = {"ID",       "NAME",   "STATE",    "SEARCHER",
                                     "PROGRESS", "TRIALS", "SUBMITTED"};
  if (any_archived) header.push_back("ARCHIVED");
  TextTable table(std::move(header));
  for (const ExperimentSummary& experiment : list.experiments) {
    std::vector<std::string> row = {
        absl::StrCat(experiment.experiment_id),
        experiment.name,
        std::string(ExperimentStateName(experiment.state)),
        experiment.searcher,
        FormatProgress(experiment.progress),
        TrialCounts(experiment),
        FormatUnixTime(experiment.submitted_unix_time),
    };
    if (any_archived) row.push_back(experiment.archived ? "yes" : "");
    table.AddRow(std::move(row));
  }
  return table.Render();
}

std::string FormatExperimentDescription(const ExperimentDescription& description,
                                        double now_unix_time) {
  std::string out = SummaryLines(description, now_unix_time);
  out += '\n';
  if (description.trials.empty()) {
    out += "no trials yet\n";
    return out;
  }
  out += TrialTable(description.trials);
  std::string validation;
  std::string timing;
  std::string gpus;
  std::string ranks;
  std::string errors;
  for (const TrialSummary& trial : description.trials) {
    if (trial.records_per_second > 0 || !trial.latest_timings.empty()) {
      absl::StrAppend(&timing, "  trial ", trial.trial_id, ": ",
                      absl::StrFormat("%.0f records/s", trial.records_per_second));
      if (trial.scaling_efficiency > 0) {
        absl::StrAppend(&timing,
                        absl::StrFormat(" (scaling efficiency %.2f against experiment "
                                        "%d at 1 slot)",
                                        trial.scaling_efficiency, trial.baseline_experiment_id));
      }
      for (const NamedValue& phase : trial.latest_timings) {
        absl::StrAppend(&timing, absl::StrFormat(", %s %.3g s", phase.name, phase.value));
      }
      absl::StrAppend(&timing, "\n");
    }
    for (const RankPace& pace : trial.latest_ranks) {
      absl::StrAppend(&ranks, absl::StrFormat("  trial %d rank %u: step %.3g s per batch (%.3g s "
                                              "in the plugin), %.2f of the fastest, %.2f of its "
                                              "best\n",
                                              trial.trial_id, pace.rank, pace.step_seconds,
                                              pace.compute_seconds, pace.vs_fastest, pace.vs_best));
    }
    for (const GpuReading& gpu : trial.latest_gpus) {
      absl::StrAppend(
          &gpus, absl::StrFormat("  trial %d rank %u: GPU %u (%s) %.0f%% busy, %.1f of "
                                 "%.1f GiB\n",
                                 trial.trial_id, gpu.rank, gpu.gpu, gpu.name, gpu.utilization,
                                 gpu.memory_used / 1073741824.0, gpu.memory_total / 1073741824.0));
    }
    if (!trial.latest_validation.empty()) {
      absl::StrAppend(&validation, "  trial ", trial.trial_id, ": ",
                      FormatMetrics(trial.latest_validation), "\n");
    }
    if (!trial.error.empty()) {
      absl::StrAppend(&errors, "  trial ", trial.trial_id, ": ", trial.error, "\n");
    }
  }
  if (!validation.empty()) absl::StrAppend(&out, "\nlatest validation metrics:\n", validation);
  if (!timing.empty()) {
    absl::StrAppend(&out,
                    "\nthroughput and where the time went, since the previous training report:\n",
                    timing);
  }
  if (!ranks.empty()) {
    absl::StrAppend(&out, "\nranks' pace (straggler scores), since the previous training report:\n",
                    ranks);
  }
  if (!gpus.empty()) {
    absl::StrAppend(&out, "\nGPUs, since the previous training report:\n", gpus);
  }
  if (!errors.empty()) absl::StrAppend(&out, "\ntrial errors:\n", errors);
  return out;
}

}  // namespace cohort
