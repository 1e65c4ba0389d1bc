// What `cohort report` shows of a run folder (run_folder.h): the experiment's record, its
// slots per trial, and every trial's reports from metrics.jsonl; and all of it as the JSON the
// report page draws from.
//
//   absl::StatusOr<RunReportData> run = ReadRunForReport("runs/mlp-20261124-101500");
//   std::string json = ReportDataJson({*run});
//
// The JSON: {"runs": [{"folder", "name", "state", "slots", "searcher_metric",
// "smaller_is_better", "trials": [{"id", "state", "restarts", "hyperparameters" (an object),
// "training": [...], "validation": [...]}]}]}, each report as its line of metrics.jsonl
// (MetricsReportJson). Non-finite numbers become null.
//
// Thread-safety: pure functions over files.
#ifndef COHORT_HARNESS_COHORT_REPORT_REPORT_DATA_H_
#define COHORT_HARNESS_COHORT_REPORT_REPORT_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/control/worker_messages.h"
#include "runtime/record/experiment_record.h"

namespace cohort {

struct RunReportData {
  std::string folder;
  ExperimentRecord record;
  uint32_t slots_per_trial = 1;
  std::string one_slot_fingerprint;  // OneSlotFingerprint of its config: its scaling baseline's
  std::vector<std::vector<MetricsReport>> reports;  // per record.trials entry, in file order
};

// NOT_FOUND when `folder` holds no experiment.json or config.yaml; the reading error otherwise.
// A trial without metrics.jsonl has no reports; lines that do not parse are skipped.
absl::StatusOr<RunReportData> ReadRunForReport(const std::string& folder);

std::string ReportDataJson(const std::vector<RunReportData>& runs);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_REPORT_REPORT_DATA_H_
