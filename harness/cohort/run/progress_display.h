// ProgressDisplay: what `cohort run` shows while trials train.
//
// On a terminal, one line per trial is redrawn in place:
//   trial 1  1200/5000 batches  loss 0.3121  51234 records/s  ETA 0:07
// Otherwise (a pipe, a CI log) the same line is printed as a plain line when training metrics
// are reported, so logs stay short. Validation results, checkpoints and messages are always
// printed as their own lines, above the redrawn line.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_
#define COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_

#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class ProgressDisplay {
 public:
  // Redraws in place when `out` is a terminal.
  explicit ProgressDisplay(std::FILE* out);

  void Update(const ProgressReport& progress);
  void Metrics(const MetricsReport& report);
  // A line of its own (the progress line is cleared first and redrawn after).
  void Message(absl::string_view line);
  // Ends the redrawn line (before the process prints its summary).
  void Finish();

 private:
  std::string ProgressLine() const;
  void Redraw();

  std::FILE* out_;
  bool terminal_;
  bool line_shown_ = false;
  bool have_progress_ = false;
  ProgressReport last_;
};

// "0:07", "1:02:03".
std::string FormatDuration(double seconds);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_
