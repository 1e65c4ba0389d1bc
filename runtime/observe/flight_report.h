// GatherFlightReport: a task's flight records (flight_files.h) gathered into one JSON file of the
// run folder, with their diagnosis (flight_diagnosis.h): what the orchestrator writes when a
// multi-rank task fails and when `cohort trial diagnose` asks.
//
//   absl::StatusOr<FlightReport> report =
//       GatherFlightReport(root, /*trial_id=*/7, /*task_id=*/12, /*world_size=*/2,
//                          run_dir + "/trials/7/flight_record.json");
//
// The file: {"trial_id", "task_id", "world_size", "diagnosis": {"summary", "collective",
// "entered", "missing", "silent", "ranks"}, "records": [{"rank", "pid", "attempt", "started_ns",
// "alive_ns", "ended", "path", "collectives": [{"seq", "group", "kind", "purpose", "bucket",
// "batch", "bytes", "dtype", "state", "enqueued_ns", "started_ns", "finished_ns"}, ...]}, ...]},
// replaced whole (written beside it, then renamed).
//
// Thread-safety: safe to call from any thread; two calls for one out_path race.
#ifndef COHORT_RUNTIME_OBSERVE_FLIGHT_REPORT_H_
#define COHORT_RUNTIME_OBSERVE_FLIGHT_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/observe/flight_diagnosis.h"

namespace cohort {

struct FlightReport {
  FlightDiagnosis diagnosis;
  size_t records = 0;                   // the rank records read
  std::vector<std::string> unreadable;  // why a record could not be read, one per file
};

// NOT_FOUND when the task left no record; else the report, written to `out_path`.
// `ended_outside`: the ranks its agents saw end outside Cohort, with how (DiagnoseFlights).
absl::StatusOr<FlightReport> GatherFlightReport(
    const std::string& checkpoint_root, uint64_t trial_id, uint64_t task_id, uint32_t world_size,
    const std::string& out_path, const std::map<uint32_t, std::string>& ended_outside = {});

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_FLIGHT_REPORT_H_
