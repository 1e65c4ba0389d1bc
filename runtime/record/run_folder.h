// RunFolder: the files `cohort run` leaves behind for one experiment.
//
//   <run>/config.yaml                  the effective config (after --set), exactly what ran
//   <run>/experiment.json              state, each trial's state, best and final metrics,
//                                      checkpoint ids (rewritten atomically on every change)
//   <run>/trials/<id>/metrics.jsonl    one JSON object per training or validation report
//   <run>/trials/<id>/log.txt          the worker's stdout and stderr, across restarts
//   <run>/trials/<id>/events.out.tfevents.cohort
//                                      the reports as TensorBoard events (tensorboard_events.h)
//   <run>/checkpoints/                 checkpoint storage, unless the config names another
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_RECORD_RUN_FOLDER_H_
#define COHORT_RUNTIME_RECORD_RUN_FOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

class RunFolder {
 public:
  // Creates `path` (and its parents); FAILED_PRECONDITION if it already holds an experiment.
  static absl::StatusOr<RunFolder> Create(const std::string& path);
  // An existing run folder: NOT_FOUND when there is none at `path` or it has no config.yaml,
  // FAILED_PRECONDITION when `path` cannot be looked at (a parent folder it may not read).
  static absl::StatusOr<RunFolder> Open(const std::string& path);

  const std::string& path() const { return path_; }
  std::string config_path() const { return path_ + "/config.yaml"; }
  std::string experiment_json_path() const { return path_ + "/experiment.json"; }
  std::string trial_dir(uint64_t trial_id) const;
  std::string metrics_path(uint64_t trial_id) const {
    return trial_dir(trial_id) + "/metrics.jsonl";
  }
  std::string log_path(uint64_t trial_id) const { return trial_dir(trial_id) + "/log.txt"; }
  std::string tensorboard_path(uint64_t trial_id) const {
    return trial_dir(trial_id) + "/events.out.tfevents.cohort";
  }
  std::string default_checkpoint_root() const { return path_ + "/checkpoints"; }

  // Creates trials/<id>/.
  absl::Status PrepareTrial(uint64_t trial_id) const;

 private:
  explicit RunFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// "<parent>/<name>-<YYYYmmdd-HHMMSS>", with "-2", "-3"... if that exists already. The name is
// made one safe path component first: every byte but letters, digits, '-', '_' and '.' becomes
// '_', and leading dots go, so no name ("../x", "/etc") can put the folder outside `parent`.
std::string DefaultRunPath(const std::string& parent, const std::string& name);

// Writes `contents` to a temporary file beside `path`, fsyncs it and renames it over `path`.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);
// Appends one line (a newline is added) and flushes it to the kernel.
absl::Status AppendLine(const std::string& path, absl::string_view line);

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_RUN_FOLDER_H_
