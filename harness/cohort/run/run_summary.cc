#include "harness/cohort/run/run_summary.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

std::string Batches(const TrialRecord& trial) {
  return absl::StrFormat("after %d of %d batches", trial.batches_trained, trial.total_batches);
}

// " (best, latest)": which of a trial's kept checkpoints this one is; empty for neither.
std::string CheckpointRole(const TrialRecord& trial, const CheckpointEntry& checkpoint,
                           const CheckpointEntry* best) {
  std::vector<std::string> roles;
  if (&checkpoint == best) roles.push_back("best");
  if (&checkpoint == &trial.checkpoints.back()) roles.push_back("latest");
  return roles.empty() ? "" : absl::StrCat(" (", absl::StrJoin(roles, ", "), ")");
}

// The trial's details, each line indented by `indent`.
void PrintTrialDetails(const ExperimentRecord& record, const TrialRecord& trial,
                       const std::string& indent, std::FILE* out) {
  // A trial that ended well keeps its last failure only as history: it is no error of the run.
  if (!trial.error.empty() && trial.state == RunState::kError) {
    std::fprintf(out, "%serror: %s\n", indent.c_str(), trial.error.c_str());
  } else if (!trial.error.empty() && trial.restarts > 0) {
    std::fprintf(out, "%srestarted %u time%s; the last failure: %s\n", indent.c_str(),
                 trial.restarts, trial.restarts == 1 ? "" : "s", trial.error.c_str());
  }
  if (trial.best_validation) {
    std::string metrics;
    for (const NamedValue& m : trial.best_validation->metrics) {
      absl::StrAppendFormat(&metrics, " %s=%.6g", m.name, m.value);
    }
    std::fprintf(out, "%sbest validation (after %llu batches):%s\n", indent.c_str(),
                 static_cast<unsigned long long>(trial.best_validation->batches), metrics.c_str());
  }
  const CheckpointEntry* best = record.BestCheckpoint(trial);
  for (const CheckpointEntry& checkpoint : trial.checkpoints) {
    std::fprintf(out, "%scheckpoint %s%s\n", indent.c_str(), checkpoint.id.c_str(),
                 CheckpointRole(trial, checkpoint, best).c_str());
  }
}

// "  best trial 2: accuracy 0.8752 after 3000 batches, checkpoint trial-2-batch-3000".
void PrintBestTrial(const ExperimentRecord& record, std::FILE* out) {
  const TrialRecord* best = record.BestTrial();
  if (best == nullptr) return;
  const CheckpointEntry* checkpoint = record.BestCheckpoint(*best);
  std::fprintf(out, "  best trial %llu: %s %.6g after %llu batches%s\n",
               static_cast<unsigned long long>(best->id), record.searcher_metric.c_str(),
               *record.SearcherMetricOf(*best->best_validation),
               static_cast<unsigned long long>(best->best_validation->batches),
               checkpoint ? absl::StrCat(", checkpoint ", checkpoint->id).c_str()
                          : " (no checkpoint of it kept)");
}

}  // namespace

void PrintRunSummary(const ExperimentRecord& record, const std::string& run_folder,
                     std::FILE* out) {
  if (record.trials.size() == 1) {
    const TrialRecord& trial = record.trials.front();
    std::fprintf(out, "experiment %s: %s %s\n", record.name.c_str(), RunStateName(record.state),
                 Batches(trial).c_str());
    PrintTrialDetails(record, trial, "  ", out);
  } else {
    std::fprintf(out, "experiment %s: %s, %zu trials\n", record.name.c_str(),
                 RunStateName(record.state), record.trials.size());
    PrintBestTrial(record, out);
    for (const TrialRecord& trial : record.trials) {
      std::fprintf(out, "  trial %llu %s %s, hyperparameters %s\n",
                   static_cast<unsigned long long>(trial.id), RunStateName(trial.state),
                   Batches(trial).c_str(),
                   trial.hyperparameters_json.empty() ? record.hyperparameters_json.c_str()
                                                      : trial.hyperparameters_json.c_str());
      PrintTrialDetails(record, trial, "    ", out);
    }
  }
  std::fprintf(out, "  run folder: %s\n", run_folder.c_str());
}

}  // namespace cohort
