#include "runtime/orchestrator/trial_log.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace cohort {

const TrialLogLine& TrialLog::Append(uint32_t attempt, const LogLine& line) {
  if (lines_.size() == capacity_) lines_.pop_front();
  lines_.push_back(TrialLogLine{next_sequence_++, line.rank, attempt,
                                line.stream == LogStream::kStderr, line.unix_time, line.text});
  return lines_.back();
}

std::vector<TrialLogLine> TrialLog::After(uint64_t sequence, int32_t rank, size_t max_lines) const {
  std::vector<TrialLogLine> found;
  if (sequence >= last_sequence()) return found;
  // Sequences are consecutive, so the first line after `sequence` is found by subtraction.
  const uint64_t first_kept = lines_.empty() ? next_sequence_ : lines_.front().sequence;
  const uint64_t start = std::max(sequence + 1, first_kept) - first_kept;
  for (size_t i = start; i < lines_.size() && found.size() < max_lines; ++i) {
    if (rank < 0 || lines_[i].rank == static_cast<uint32_t>(rank)) found.push_back(lines_[i]);
  }
  return found;
}

std::string MetricsLogText(const MetricsReport& report) {
  std::string text = absl::StrFormat(
      "[cohort] %s after %d batches:",
      report.kind == ReportKind::kValidation ? "validation" : "training", report.batches);
  for (const NamedValue& metric : report.metrics) {
    absl::StrAppendFormat(&text, " %s=%.6g", metric.name, metric.value);
  }
  if (report.kind == ReportKind::kTraining && report.records_per_second > 0) {
    absl::StrAppendFormat(&text, " (%.0f records/s)", report.records_per_second);
  }
  return text;
}

}  // namespace cohort
