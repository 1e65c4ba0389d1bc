// The Orchestrator's side of the agents' task reports: metrics and checkpoints, recorded in the
// trial's run folder, the repeats of an agent sending again what it may have lost left out, and
// those of tasks the orchestrator does not run (a predecessor's) filling the trial's record up to
// the checkpoint it goes on from (docs/protocol.md, "Reconnecting after an orchestrator restart").
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/checkpoint/shared_fs_storage.h"
#include "runtime/orchestrator/cluster_queries.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/record/tensorboard_events.h"

namespace cohort {

void Orchestrator::AddOtherAgentsGpus(Task& task, MetricsReport& metrics) {
  const size_t forwarded = metrics.gpus.size();
  for (auto& [agent_id, part] : task.parts) {
    metrics.gpus.insert(metrics.gpus.end(), part.gpus.begin(), part.gpus.end());
    part.gpus.clear();
  }
  if (metrics.gpus.size() == forwarded) return;
  std::sort(metrics.gpus.begin(), metrics.gpus.end(),
            [](const GpuReading& a, const GpuReading& b) { return a.rank < b.rank; });
  // The forwarding agent warned about its own GPUs; across agents only the orchestrator sees all.
  const std::optional<std::string> unbalanced = GpuImbalance(metrics.gpus);
  if (unbalanced && !task.gpus_unbalanced) {
    Notice(absl::StrCat("warning: trial ", task.trial_id, ": ", *unbalanced));
  }
  task.gpus_unbalanced = unbalanced.has_value();
}

namespace {

// Whether the record holds `report` already: a trial's reports of one kind come in the order of
// their batches (a trial that goes back to a checkpoint forgets what came after it first), so one
// at or before the latest recorded of its kind is a repeat (an agent sending again what its Ack
// may have been lost with, or a task validating again where its predecessor did).
bool Recorded(const ExperimentRecord& record, uint64_t trial_id, const MetricsReport& report) {
  for (const TrialRecord& trial : record.trials) {
    if (trial.id != trial_id) continue;
    const std::optional<MetricsReport>& latest =
        report.kind == ReportKind::kTraining ? trial.latest_training : trial.latest_validation;
    return latest && report.batches <= latest->batches;
  }
  return false;
}

}  // namespace

void Orchestrator::OnMetrics(const TaskMetricsReport& report) {
  Task* task = FindTask(report.task_id);
  // A task this orchestrator does not run (a predecessor's, or one that ended meanwhile) reports
  // for the trial its agent forwards it as.
  auto found = cluster_->trials.find(task != nullptr ? task->trial_id : report.report.trial_id);
  if (found == cluster_->trials.end()) return;
  Trial& trial = *found->second;
  Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  if (Recorded(experiment.record, trial.id, report.report)) return;
  // Of such a task, what came after the checkpoint its trial goes on from is trained again, and
  // reported anew.
  if (task == nullptr && report.report.batches > trial.latest_checkpoint_batches) return;
  MetricsReport metrics = report.report;
  metrics.trial_id = trial.id;
  metrics.scaling_efficiency.reset();  // the orchestrator's to say, below
  if (metrics.kind == ReportKind::kTraining) {
    metrics.scaling_efficiency =
        orchestration::ScalingEfficiency(*cluster_, experiment, metrics.records_per_second);
    if (task != nullptr) {
      AddOtherAgentsGpus(*task, metrics);
      WarnOfStragglers(*task, metrics);
    }
  }
  if (task == nullptr && !std::exchange(trial.told_earlier_reports, true)) {
    Notice(absl::StrCat("trial ", trial.id, ": recording what task ", report.task_id,
                        " reported while no orchestrator heard it, up to batch ",
                        trial.latest_checkpoint_batches));
  }
  RecordMetrics(experiment, trial, task != nullptr ? task->attempt : 0, metrics);
}

void Orchestrator::RecordMetrics(Experiment& experiment, Trial& trial, uint32_t attempt,
                                 const MetricsReport& metrics) {
  if (absl::Status appended =
          AppendLine(experiment.folder->metrics_path(trial.id), MetricsReportJson(metrics));
      !appended.ok()) {
    Notice(absl::StrCat("warning: ", appended.message()));
  }
  if (absl::Status appended =
          AppendTensorBoardReport(experiment.folder->tensorboard_path(trial.id), metrics);
      !appended.ok()) {
    Notice(absl::StrCat("warning: ", appended.message()));
  }
  experiment.record.Apply(metrics);
  if (const std::optional<double> value = experiment.record.SearcherMetricOf(metrics);
      metrics.kind == ReportKind::kValidation && value && std::isnan(*value) &&
      !trial.told_nan_metric) {
    trial.told_nan_metric = true;
    // A training loss still finite points at the validation itself, not at a diverged training.
    const std::optional<MetricsReport>& training =
        experiment.record.trial(trial.id).latest_training;
    const NamedValue* loss = nullptr;
    if (training) {
      for (const NamedValue& metric : training->metrics) {
        if (metric.name == "loss") loss = &metric;
      }
    }
    const std::string why =
        loss != nullptr && std::isfinite(loss->value)
            ? absl::StrCat("its training loss was finite at its latest report (", loss->value,
                           " after batch ", training->batches,
                           "): the steps since diverged, or its evaluate_batch computes the NaN; "
                           "a NaN is never its best validation")
            : "its training diverged, and a NaN is never its best validation "
              "(optimizations.nonfinite_gradients: fail ends a trial at its first non-finite "
              "gradient)";
    Notice(absl::StrCat("warning: trial ", trial.id, " validated ",
                        experiment.config.searcher.metric, "=nan after ", metrics.batches,
                        " batches: ", why));
  }
  if (metrics.kind == ReportKind::kTraining && !trial.told_nonfinite_loss) {
    for (const NamedValue& metric : metrics.metrics) {
      if (metric.name != "loss" || std::isfinite(metric.value)) continue;
      trial.told_nonfinite_loss = true;
      // The report's loss is over the batches since the one before: it names them.
      Notice(absl::StrCat("warning: trial ", trial.id, "'s training loss is ",
                          std::isnan(metric.value) ? "nan" : "infinite",
                          " in its report after batch ", metrics.batches,
                          " (over the batches since its report before: one of them or more)",
                          ": its training diverged, or its plugin computes the loss wrongly "
                          "(optimizations.nonfinite_gradients: skip or fail guards the steps "
                          "against non-finite gradients)"));
    }
  }
  const TrialLogLine& line =
      trial.log.AppendOrchestratorLine(attempt, metrics.unix_time, MetricsLogText(metrics));
  if (absl::Status appended = AppendLine(experiment.folder->log_path(trial.id), line.text);
      !appended.ok()) {
    Notice(absl::StrCat("warning: ", appended.message()));
  }
  trial.exchanged_bytes += metrics.exchanged_bytes;
  trial.batches_trained = std::max(trial.batches_trained, metrics.batches);
  if (metrics.kind == ReportKind::kValidation && metrics.batches == trial.target_batches) {
    trial.segment_metric = experiment.record.SearcherMetricOf(metrics);
  }
  experiment.dirty = true;
}

void Orchestrator::NoteInTrialLog(Trial& trial, uint32_t attempt, absl::string_view text) {
  const TrialLogLine& line = trial.log.AppendOrchestratorLine(attempt, clock_.UnixSeconds(),
                                                              absl::StrCat("[cohort] ", text));
  const Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  if (absl::Status appended = AppendLine(experiment.folder->log_path(trial.id), line.text);
      !appended.ok()) {
    Notice(absl::StrCat("warning: ", appended.message()));
  }
}

void Orchestrator::WarnOfStragglers(Task& task, const MetricsReport& report) {
  Trial& trial = *cluster_->trials.at(task.trial_id);
  Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  const double threshold = experiment.config.optimizations.straggler_threshold;
  for (const RankPace& slow : task.stragglers.Observe(report.ranks, threshold)) {
    std::string agent = "an unknown agent";
    for (const auto& [agent_id, part] : task.parts) {
      if (part.ranks.count(static_cast<int32_t>(slow.rank)) != 0) agent = "agent " + agent_id;
    }
    const std::string line =
        absl::StrCat("warning: ", DescribeStraggler(slow), "; it runs on ", agent,
                     absl::StrFormat(" (optimizations.straggler_threshold %g)", threshold));
    Notice(absl::StrCat("trial ", trial.id, ": ", line));
    const TrialLogLine& logged = trial.log.AppendOrchestratorLine(task.attempt, report.unix_time,
                                                                  absl::StrCat("[cohort] ", line));
    if (absl::Status appended = AppendLine(experiment.folder->log_path(trial.id), logged.text);
        !appended.ok()) {
      Notice(absl::StrCat("warning: ", appended.message()));
    }
  }
}

void Orchestrator::OnRestoredOlderCheckpoint(Experiment& experiment, Trial& trial,
                                             const TaskCheckpointReport& report) {
  if (report.batches >= trial.latest_checkpoint_batches) return;  // nothing recorded is redone
  Notice(
      absl::StrCat("trial ", trial.id, " resumed from ",
                   report.checkpoint_id.empty() ? std::string("its start") : report.checkpoint_id,
                   " at batch ", report.batches, ", not from ", trial.latest_checkpoint_id,
                   " (damaged): what it reported after batch ", report.batches,
                   " is trained again and recorded anew"));
  trial.latest_checkpoint_id = report.checkpoint_id;
  trial.latest_checkpoint_batches = report.batches;
  RemovePassedOverCheckpoints(experiment, trial, report.batches);
  RewindTrial(experiment, trial);
  experiment.dirty = true;
}

void Orchestrator::RemovePassedOverCheckpoints(Experiment& experiment, const Trial& trial,
                                               uint64_t restored_batches) {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(experiment.checkpoint_root);
  if (!storage.ok()) {
    Notice(absl::StrCat("warning: ", storage.status().message()));
    return;
  }
  // The worker went on from the newest of the trial's checkpoints that it found whole: those
  // after it, recorded or not (a damaged manifest keeps one out of the record), are damaged.
  std::set<std::string> passed_over;
  for (const TrialRecord& recorded : experiment.record.trials) {
    if (recorded.id != trial.id) continue;
    for (const CheckpointEntry& checkpoint : recorded.checkpoints) {
      if (checkpoint.batches > restored_batches) passed_over.insert(checkpoint.id);
    }
  }
  if (absl::StatusOr<std::vector<DamagedCheckpoint>> damaged = (*storage)->ListDamaged();
      damaged.ok()) {
    for (const DamagedCheckpoint& checkpoint : *damaged) {
      const std::optional<CheckpointIdParts> parts = PartsOf(checkpoint);
      if (parts && parts->trial_id == trial.id && parts->batches > restored_batches) {
        passed_over.insert(checkpoint.id);
      }
    }
  }
  for (const std::string& id : passed_over) {
    const absl::Status deleted = (*storage)->Delete(id);
    Notice(deleted.ok() || absl::IsNotFound(deleted)
               ? absl::StrCat("trial ", trial.id, ": removed the damaged checkpoint ", id,
                              " (a checkpoint is whole or absent)")
               : absl::StrCat("warning: trial ", trial.id, ": the damaged checkpoint ", id,
                              " could not be removed: ", deleted.message()));
  }
}

void Orchestrator::AdoptUnreportedCheckpoint(Experiment& experiment, Trial& trial) {
  absl::StatusOr<std::unique_ptr<CheckpointStorage>> storage =
      OpenSharedFsStorage(experiment.checkpoint_root);
  if (!storage.ok()) return;  // retention says so
  absl::StatusOr<std::vector<CheckpointInfo>> listed = (*storage)->List();
  if (!listed.ok()) return;
  const CheckpointInfo* newest = nullptr;  // List sorts by trial, then batches
  for (const CheckpointInfo& info : *listed) {
    if (info.trial_id == trial.id && info.batches_trained > trial.latest_checkpoint_batches) {
      newest = &info;
    }
  }
  if (newest == nullptr) return;
  uint64_t bytes = 0;
  for (const CheckpointFileInfo& file : newest->files) bytes += file.size;
  Notice(absl::StrCat("trial ", trial.id, ": checkpoint ", newest->id,
                      " was written whole but its task ended before reporting it: it is the "
                      "trial's latest"));
  trial.latest_checkpoint_id = newest->id;
  trial.latest_checkpoint_batches = newest->batches_trained;
  trial.batches_trained = std::max(trial.batches_trained, newest->batches_trained);
  experiment.record.Apply(CheckpointReport{trial.id, newest->id, newest->batches_trained,
                                           newest->records_trained, bytes});
  ApplyRetention(experiment, /*trials_may_resume=*/true);
  experiment.dirty = true;
}

void Orchestrator::OnCheckpoint(const TaskCheckpointReport& report) {
  Task* task = FindTask(report.task_id);
  if (task == nullptr) return;
  Trial& trial = *cluster_->trials.at(task->trial_id);
  Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  if (report.restored) {
    OnRestoredOlderCheckpoint(experiment, trial, report);
    return;
  }
  // A trial's checkpoints come in the order of their batches: an older one, or the latest again,
  // is a repeat (retention may have removed it since).
  if (report.batches < trial.latest_checkpoint_batches ||
      report.checkpoint_id == trial.latest_checkpoint_id) {
    return;
  }
  trial.latest_checkpoint_id = report.checkpoint_id;
  trial.latest_checkpoint_batches = report.batches;
  trial.batches_trained = std::max(trial.batches_trained, report.batches);
  trial.records_trained = std::max(trial.records_trained, report.records);
  experiment.record.Apply(CheckpointReport{trial.id, report.checkpoint_id, report.batches,
                                           report.records, report.bytes});
  ApplyRetention(experiment, /*trials_may_resume=*/true);
  Save(experiment);
}

}  // namespace cohort
