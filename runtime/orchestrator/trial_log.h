// TrialLog: a trial's worker output for `cohort trial logs`: every line numbered in arrival
// order over the trial's life, the latest `capacity` kept in memory (the run folder's log.txt
// keeps them all). Besides the workers' own lines, the orchestrator adds the agent's word about
// a rank ("[agent] ...", as that rank's) and lines of its own, of no rank: a line per metrics
// report (MetricsLogText) and its notes on the trial's tasks, each "[cohort] ...", so a followed
// log shows the trial moving.
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
  // The same for the orchestrator's own line about the trial (`text` starts "[cohort] "), which
  // belongs to no rank (TrialLogLine::orchestrator_line).
  const TrialLogLine& AppendOrchestratorLine(uint32_t attempt, double unix_time,
                                             const std::string& text);

  // Kept lines with a sequence above `sequence`, oldest first, at most `max_lines`: every line for
  // `rank` -1, else only rank `rank`'s (the orchestrator's own lines left out).
  std::vector<TrialLogLine> After(uint64_t sequence, int32_t rank, size_t max_lines) const;

  // The sequence of the latest line, 0 before any.
  uint64_t last_sequence() const { return next_sequence_ - 1; }

  // Appends the last `capacity` lines of the trial's log.txt at `path`, which an earlier
  // orchestrator wrote, so a restarted one still shows what the trial printed before: a line
  // "[rank N] text" is rank N's text, a "[cohort] ..." line the orchestrator's own, any other (the
  // agent's "[agent] ...") rank 0's as it stands; log.txt keeps neither the attempt (0 here) nor
  // the time (0). A missing file appends nothing. Call before any other Append.
  void AppendRecorded(const std::string& path);

 private:
  const TrialLogLine& Keep(TrialLogLine line);

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
