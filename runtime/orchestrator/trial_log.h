// TrialLog: a trial's worker output for `cohort trial logs`: every line numbered in arrival
// order over the trial's life, the latest `capacity` kept in memory (the run folder's log.txt
// keeps them all). Besides the workers' own lines, the orchestrator adds the agent's word about
// the trial ("[agent] ...") and a line per metrics report ("[cohort] ...", MetricsLogText), so a
// followed log shows the trial moving.
//
//   TrialLog log(20000);
//   log.Append(/*attempt=*/0, line);          // sequence 1
//   std::vector<TrialLogLine> lines = log.After(/*sequence=*/0, /*rank=*/-1, /*max_lines=*/500);
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LOG_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "runtime/client/client_messages.h"
#include "runtime/control/control_messages.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

class TrialLog {
 public:
  explicit TrialLog(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Numbers the line (the next sequence) and keeps it, forgetting the oldest beyond capacity.
  const TrialLogLine& Append(uint32_t attempt, const LogLine& line);

  // Kept lines with a sequence above `sequence`, of `rank` (-1: every rank), oldest first, at
  // most `max_lines`.
  std::vector<TrialLogLine> After(uint64_t sequence, int32_t rank, size_t max_lines) const;

  // The sequence of the latest line, 0 before any.
  uint64_t last_sequence() const { return next_sequence_ - 1; }

  // Appends the last `capacity` lines of the trial's log.txt at `path`, which an earlier
  // orchestrator wrote, so a restarted one still shows what the trial printed before: a line
  // "[rank N] text" is rank N's text, any other (the orchestrator's "[cohort] ..." and the agent's
  // "[agent] ...") rank 0's as it stands; log.txt keeps neither the attempt (0 here) nor the time
  // (0). A missing file appends nothing. Call before any other Append.
  void AppendRecorded(const std::string& path);

 private:
  size_t capacity_;
  uint64_t next_sequence_ = 1;
  std::deque<TrialLogLine> lines_;
};

// The trial log's line for a metrics report, e.g. "[cohort] validation after 500 batches:
// loss=1.85091 accuracy=0.3695" or "[cohort] training after 500 batches: loss=2.3102
// (1234 records/s)".
std::string MetricsLogText(const MetricsReport& report);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LOG_H_
