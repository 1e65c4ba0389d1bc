// LogBatcher: gathers one task's worker output lines into LogBatch messages, so the orchestrator
// gets a few messages a second per task rather than one per line.
//
// A batch is ready as soon as it holds `max_lines` lines (Add returns it), or once its oldest line
// has waited `max_delay_seconds` (Due returns it). Take empties the batcher whatever it holds, as
// the task ends. Lines keep the order they were added in. Times are seconds on any monotonic clock.
//
//   LogBatcher batcher(/*task_id=*/7);
//   if (std::optional<LogBatch> full = batcher.Add(line, now)) Send(*full);
//   ...
//   if (std::optional<LogBatch> due = batcher.Due(now)) Send(*due);   // from a timer
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_AGENT_LOG_BATCHER_H_
#define COHORT_RUNTIME_AGENT_LOG_BATCHER_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "runtime/control/control_messages.h"

namespace cohort {

inline constexpr size_t kLogBatchMaxLines = 64;
inline constexpr double kLogBatchMaxDelaySeconds = 0.2;

class LogBatcher {
 public:
  explicit LogBatcher(uint64_t task_id, size_t max_lines = kLogBatchMaxLines,
                      double max_delay_seconds = kLogBatchMaxDelaySeconds)
      : max_lines_(max_lines == 0 ? 1 : max_lines), max_delay_seconds_(max_delay_seconds) {
    batch_.task_id = task_id;
  }

  // Adds `line`, read at `now`; returns the batch when this line fills it.
  std::optional<LogBatch> Add(LogLine line, double now);

  // The batch held, if its oldest line was added `max_delay_seconds` or more before `now`.
  std::optional<LogBatch> Due(double now);

  // The batch held, if it holds any line.
  std::optional<LogBatch> Take();

  size_t size() const { return batch_.lines.size(); }

 private:
  size_t max_lines_;
  double max_delay_seconds_;
  LogBatch batch_;
  double oldest_ = 0;  // when the batch's first line was added
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_LOG_BATCHER_H_
