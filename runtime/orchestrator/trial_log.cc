#include "runtime/orchestrator/trial_log.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace cohort {
namespace {

// The last `count` lines of the file at `path` (without their newlines), read from its end in
// blocks, so a long log costs only its tail; none when it cannot be read.
std::vector<std::string> LastLines(const std::string& path, size_t count) {
  constexpr std::streamoff kBlock = 64 << 10;
  std::ifstream file(path, std::ios::binary);
  if (!file || !file.seekg(0, std::ios::end)) return {};
  const std::streamoff size = file.tellg();
  std::string tail;
  std::streamoff start = size;
  // One newline more than `count` lines need, or the whole file.
  while (start > 0 && static_cast<size_t>(std::count(tail.begin(), tail.end(), '\n')) <= count) {
    const std::streamoff length = std::min(kBlock, start);
    start -= length;
    std::string block(static_cast<size_t>(length), '\0');
    if (!file.seekg(start) || !file.read(block.data(), length)) return {};
    tail.insert(0, block);
  }
  std::vector<std::string> lines = absl::StrSplit(tail, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // after the last newline
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());   // cut by the block's start
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<long>(count));
  return lines;
}

// How the orchestrator's own lines start, in log.txt as in `cohort trial logs`.
constexpr absl::string_view kOrchestratorLinePrefix = "[cohort] ";

// "[rank 3] text" -> rank 3, "text"; any other line is rank 0's, whole.
LogLine RecordedLine(const std::string& text) {
  LogLine line{0, LogStream::kStdout, 0, text};
  constexpr absl::string_view kRank = "[rank ";
  if (!absl::StartsWith(text, kRank)) return line;
  const size_t close = text.find("] ", kRank.size());
  uint32_t rank = 0;
  if (close == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(text).substr(kRank.size(), close - kRank.size()),
                        &rank)) {
    return line;
  }
  line.rank = rank;
  line.text = text.substr(close + 2);
  return line;
}

}  // namespace

const TrialLogLine& TrialLog::Keep(TrialLogLine line) {
  if (lines_.size() == capacity_) lines_.pop_front();
  line.sequence = next_sequence_++;
  lines_.push_back(std::move(line));
  return lines_.back();
}

const TrialLogLine& TrialLog::Append(uint32_t attempt, const LogLine& line) {
  return Keep(TrialLogLine{0, line.rank, attempt, line.stream == LogStream::kStderr, line.unix_time,
                           line.text, false});
}

const TrialLogLine& TrialLog::AppendOrchestratorLine(uint32_t attempt, double unix_time,
                                                     const std::string& text) {
  return Keep(TrialLogLine{0, 0, attempt, false, unix_time, text, true});
}

void TrialLog::AppendRecorded(const std::string& path) {
  for (const std::string& text : LastLines(path, capacity_)) {
    if (absl::StartsWith(text, kOrchestratorLinePrefix)) {
      AppendOrchestratorLine(0, 0, text);
    } else {
      Append(0, RecordedLine(text));
    }
  }
}

std::vector<TrialLogLine> TrialLog::After(uint64_t sequence, int32_t rank, size_t max_lines) const {
  std::vector<TrialLogLine> found;
  if (sequence >= last_sequence()) return found;
  // Sequences are consecutive, so the first line after `sequence` is found by subtraction.
  const uint64_t first_kept = lines_.empty() ? next_sequence_ : lines_.front().sequence;
  const uint64_t start = std::max(sequence + 1, first_kept) - first_kept;
  for (size_t i = start; i < lines_.size() && found.size() < max_lines; ++i) {
    const TrialLogLine& line = lines_[i];
    if (rank < 0 || (!line.orchestrator_line && line.rank == static_cast<uint32_t>(rank))) {
      found.push_back(line);
    }
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
