// ProgressDisplay: what `cohort run` shows while trials train.
//
// On a terminal, one line per trial in training, oldest trial first, redrawn in place:
//   trial 1  1200/5000 batches  loss 0.3121  51234 records/s  ETA 0:07
//   trial 2  800/5000 batches  loss 0.4410  48800 records/s  ETA 0:10
// its batches the latest that its progress or its training reports gave, and its loss the mean
// of its latest training report (none before the first),
// at most kMaxTrialLines of them (then "... and 3 more trials training"), each cut to the
// terminal's width so that none wraps. A trial's line goes when its task ends (TrialEnded), and
// comes back with its next task's progress. Otherwise (a pipe, a CI log) a trial's line is printed
// as a plain line when its training metrics are reported, so logs stay short. Validation results,
// checkpoints and messages are always printed as lines of their own, above the redrawn ones.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_
#define COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class ProgressDisplay {
 public:
  // The most trial lines redrawn; the others are counted on one more line.
  static constexpr size_t kMaxTrialLines = 8;

  // Redraws in place when `out` is a terminal, cut to its width.
  explicit ProgressDisplay(std::FILE* out);
  // As if `out` were a terminal (`terminal`) of `width` columns (0: lines are not cut).
  ProgressDisplay(std::FILE* out, bool terminal, size_t width);

  void Update(const ProgressReport& progress);
  // The trial's task ended (completed, failed or stopped): its line goes.
  void TrialEnded(uint64_t trial_id);
  void Metrics(const MetricsReport& report);
  // A line of its own (the trial lines are cleared first and redrawn after).
  void Message(absl::string_view line);
  // Ends the redrawn lines (before the process prints its summary).
  void Finish();

 private:
  // A trial's line: its latest progress and training report.
  struct TrialLine {
    ProgressReport progress;        // batches, total, pace
    std::optional<double> loss;     // the mean loss of its latest training report
    uint64_t reported_batches = 0;  // that report's batches
  };

  void Clear();
  void Redraw();
  size_t Width() const;

  std::FILE* out_;
  bool terminal_;
  std::optional<size_t> width_;  // nullopt: ask the terminal
  size_t lines_shown_ = 0;
  std::map<uint64_t, TrialLine> training_;  // by trial id
};

// "trial 1  1200/5000 batches  loss 0.3121  51234 records/s  ETA 0:07", the loss left out when
// there is none (progress.latest_loss is not read).
std::string ProgressLine(const ProgressReport& progress, std::optional<double> loss);

// "0:07", "1:02:03".
std::string FormatDuration(double seconds);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_PROGRESS_DISPLAY_H_
