// TensorBoard event files for a trial's reports, so `tensorboard --logdir RUN_DIR` draws each
// trial's curves (a run per trials/<id>/ folder), stepped by batches trained, as Determined steps
// them.
//
// Each report becomes one tensorflow.Event at the report's time whose Summary holds a scalar per
// value:
//   training report    training/<metric>, timings/<phase> (seconds since the previous training
//                      report), throughput/records_per_second, throughput/exchanged_bytes,
//                      gpu/rank<r>/utilization and gpu/rank<r>/memory_used_gib on GPUs
//   validation report  validation/<metric>
// A file starts with the event that names its format ("brain.Event:2"); records are framed as
// TFRecords (tfrecord.h). The few protobuf fields needed are encoded here (Event: wall_time 1,
// step 2, file_version 3, summary 5; Summary: value 1; Summary.Value: tag 1, simple_value 2), so
// no protobuf library is needed.
//
//   AppendTensorBoardReport(folder.tensorboard_path(trial), report);   // after each report
//   WriteTensorBoardReports(folder.tensorboard_path(trial), kept);     // after a rewind
//
// Thread-safety: one writer per file at a time.
#ifndef COHORT_RUNTIME_RECORD_TENSORBOARD_EVENTS_H_
#define COHORT_RUNTIME_RECORD_TENSORBOARD_EVENTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

// The first record of an event file, written at `wall_time` (Unix seconds).
std::string TensorBoardFileStart(double wall_time);

// The record of one report.
std::string TensorBoardReport(const MetricsReport& report);

// Appends the report's record to the event file at `path`, starting the file when it is new or
// empty, and flushes it to the kernel.
absl::Status AppendTensorBoardReport(const std::string& path, const MetricsReport& report);

// Replaces the event file at `path` (atomically) with one holding `reports`, in order: the file
// then says what metrics.jsonl says after a rewind.
absl::Status WriteTensorBoardReports(const std::string& path,
                                     const std::vector<MetricsReport>& reports);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_TENSORBOARD_EVENTS_H_
