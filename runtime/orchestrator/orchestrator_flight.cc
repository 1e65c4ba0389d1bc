// The Orchestrator and the ranks' flight records (observe/flight_report.h): gathered into the
// trial's folder with their diagnosis when a task of several ranks fails, and on request
// (DiagnoseTrial, `cohort trial diagnose`), with the ranks its agents saw end outside Cohort (a
// crash, kill -9) as the likely cause; removed when a task ends well.
//
// Two files in the trial's folder, so that a look at a running task never replaces what a failed
// one left: flight_record.json, the gathered record of the trial's last failed task, and
// flight_snapshot.json, the latest look at its running task (gone when that task ends).
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "runtime/observe/flight_files.h"
#include "runtime/observe/flight_report.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"
#include "runtime/orchestrator/task_ending.h"
#include "runtime/orchestrator/unknown_ids.h"

namespace cohort {
namespace {

std::string FlightReportPath(const orchestration::Experiment& experiment, uint64_t trial_id) {
  return experiment.folder->trial_dir(trial_id) + "/flight_record.json";
}

std::string FlightSnapshotPath(const orchestration::Experiment& experiment, uint64_t trial_id) {
  return experiment.folder->trial_dir(trial_id) + "/flight_snapshot.json";
}

}  // namespace

void Orchestrator::SettleFlightRecords(const Experiment& experiment, Trial& trial, uint64_t task_id,
                                       uint32_t ranks, TaskEnding& ending) {
  if (ranks < 2) return;
  // A look taken while the task ran is out of date once it ended, either way.
  std::error_code ignored;
  std::filesystem::remove(FlightSnapshotPath(experiment, trial.id), ignored);
  if (!ending.failed) {
    RemoveTaskFlights(experiment.checkpoint_root, trial.id, task_id);
    return;
  }
  trial.failed_task_id = task_id;
  trial.failed_task_ended_outside = ending.ended_outside;
  const std::string path = FlightReportPath(experiment, trial.id);
  absl::StatusOr<FlightReport> report = GatherFlightReport(
      experiment.checkpoint_root, trial.id, task_id, ranks, path, ending.ended_outside);
  if (!report.ok()) {
    if (!absl::IsNotFound(report.status())) {
      Notice(absl::StrCat("warning: trial ", trial.id, ": ", report.status().message()));
    }
    return;
  }
  const FlightDiagnosis& diagnosis = report->diagnosis;
  Event(absl::StrCat("trial ", trial.id, ": flight record of task ", task_id, " in ", path, ": ",
                     diagnosis.summary));
  // The failure already names how each rank ended; the record adds where the ranks parted.
  if (!diagnosis.collective.empty()) {
    absl::string_view summary = diagnosis.summary;
    absl::ConsumeSuffix(&summary, ".");  // what follows the failure goes on after it
    absl::StrAppend(&ending.failure, ending.failure.empty() ? "" : ". ",
                    "Flight record: ", summary);
  }
}

ClientMessage Orchestrator::Diagnose(const DiagnoseTrial& request) {
  const auto trial_it = cluster_->trials.find(request.trial_id);
  if (trial_it == cluster_->trials.end()) {
    return UnknownTrial(request.trial_id);
  }
  const Trial& trial = *trial_it->second;
  const Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  // The running task's records, else the newest left behind (a failed task's).
  // With the ranks its agents saw end outside Cohort, so far or when it failed.
  std::optional<uint64_t> task_id;
  uint32_t ranks = experiment.config.slots_per_trial;
  std::map<uint32_t, std::string> ended_outside;
  if (const auto task = cluster_->tasks.find(trial.task_id); task != cluster_->tasks.end()) {
    task_id = task->first;
    ranks = task->second->slots;
    ended_outside = EndingOf(task->second->parts, task->second->flags).ended_outside;
  } else {
    task_id = LatestFlightTask(experiment.checkpoint_root, trial.id);
    if (task_id == trial.failed_task_id) ended_outside = trial.failed_task_ended_outside;
  }
  if (!task_id) {
    return ClientError{ClientErrorCode::kNotFound,
                       absl::StrCat("trial ", trial.id, " has no flight record: ",
                                    ranks < 2 ? "a trial of one slot keeps none"
                                              : "no task of it is running, and none failed")};
  }
  const bool running = trial.task_id == *task_id;
  const std::string path =
      running ? FlightSnapshotPath(experiment, trial.id) : FlightReportPath(experiment, trial.id);
  absl::StatusOr<FlightReport> report = GatherFlightReport(experiment.checkpoint_root, trial.id,
                                                           *task_id, ranks, path, ended_outside);
  if (!report.ok()) {
    return ClientError{ClientErrorCode::kNotFound, std::string(report.status().message())};
  }
  FlightDiagnosis& found = report->diagnosis;
  TrialDiagnosis reply;
  reply.trial_id = trial.id;
  reply.task_id = *task_id;
  reply.running = running;
  reply.summary = std::move(found.summary);
  reply.collective = std::move(found.collective);
  reply.entered = std::move(found.entered);
  reply.missing = std::move(found.missing);
  reply.silent = std::move(found.silent);
  reply.ranks = std::move(found.ranks);
  for (const std::string& why : report->unreadable) reply.ranks.push_back(why);
  reply.record_path = path;
  return reply;
}

}  // namespace cohort
