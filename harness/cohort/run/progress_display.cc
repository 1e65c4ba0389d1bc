#include "harness/cohort/run/progress_display.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cohort {

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const uint64_t total = static_cast<uint64_t>(seconds + 0.5);
  const uint64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  return h > 0 ? absl::StrFormat("%d:%02d:%02d", h, m, s) : absl::StrFormat("%d:%02d", m, s);
}

std::string ProgressLine(const ProgressReport& progress, std::optional<double> loss) {
  std::string line =
      progress.total_batches == 0  // not known yet
          ? absl::StrFormat("trial %d  %d batches", progress.trial_id, progress.batches)
          : absl::StrFormat("trial %d  %d/%d batches", progress.trial_id, progress.batches,
                            progress.total_batches);
  if (loss) absl::StrAppendFormat(&line, "  loss %.4f", *loss);
  if (progress.records_per_second > 0 && progress.total_batches >= progress.batches) {
    const double batches_per_record =
        progress.batches > 0
            ? static_cast<double>(progress.batches) / static_cast<double>(progress.records)
            : 0;
    const double remaining = static_cast<double>(progress.total_batches - progress.batches) /
                             (progress.records_per_second * batches_per_record);
    absl::StrAppendFormat(&line, "  %.0f records/s  ETA %s", progress.records_per_second,
                          FormatDuration(remaining));
  }
  return line;
}

ProgressDisplay::ProgressDisplay(std::FILE* out) : out_(out), terminal_(::isatty(fileno(out))) {}

ProgressDisplay::ProgressDisplay(std::FILE* out, bool terminal, size_t width)
    : out_(out), terminal_(terminal), width_(width) {}

size_t ProgressDisplay::Width() const {
  if (width_) return *width_;
  struct winsize size {};
  return ::ioctl(fileno(out_), TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

void ProgressDisplay::Clear() {
  if (lines_shown_ == 0) return;
  // The cursor is at the end of the last line drawn: erase it and each line above, up to the first.
  std::fputs("\r\033[K", out_);
  for (size_t line = 1; line < lines_shown_; ++line) std::fputs("\033[A\033[K", out_);
  lines_shown_ = 0;
}

void ProgressDisplay::Redraw() {
  if (!terminal_) return;
  std::vector<std::string> lines;
  for (const auto& [trial_id, trial] : training_) {
    if (lines.size() == kMaxTrialLines) {
      const size_t more = training_.size() - kMaxTrialLines;
      lines.push_back(
          absl::StrCat("... and ", more, more == 1 ? " more trial" : " more trials", " training"));
      break;
    }
    // A report newer than the (throttled) progress moves the line on.
    ProgressReport shown = trial.progress;
    shown.batches = std::max(shown.batches, trial.reported_batches);
    lines.push_back(ProgressLine(shown, trial.loss));
  }
  // A line as wide as the terminal would move the cursor to the next row on some terminals.
  if (const size_t width = Width(); width > 1) {
    for (std::string& line : lines) {
      if (line.size() >= width) line.resize(width - 1);
    }
  }
  Clear();
  const std::string text = absl::StrJoin(lines, "\n");
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  lines_shown_ = lines.size();
}

void ProgressDisplay::Update(const ProgressReport& progress) {
  training_[progress.trial_id].progress = progress;
  Redraw();
}

void ProgressDisplay::TrialEnded(uint64_t trial_id) {
  if (training_.erase(trial_id) > 0) Redraw();
}

void ProgressDisplay::Metrics(const MetricsReport& report) {
  if (report.kind == ReportKind::kTraining) {
    TrialLine& trial = training_[report.trial_id];
    trial.progress.trial_id = report.trial_id;
    trial.reported_batches = report.batches;
    for (const NamedValue& metric : report.metrics) {
      if (metric.name == "loss") trial.loss = metric.value;
    }
    if (terminal_) {
      Redraw();
      return;
    }
    // A plain line per report, with the report's own batch count, mean loss and pace (the latest
    // progress may be from reports ago: it is throttled).
    ProgressReport plain = trial.progress;
    plain.batches = report.batches;
    plain.records = report.records;
    if (report.records_per_second > 0) plain.records_per_second = report.records_per_second;
    Message(ProgressLine(plain, trial.loss));
    return;
  }
  std::string line =
      absl::StrFormat("trial %d validation after %d batches:", report.trial_id, report.batches);
  for (const NamedValue& metric : report.metrics) {
    absl::StrAppendFormat(&line, " %s=%.6g", metric.name, metric.value);
  }
  Message(line);
}

void ProgressDisplay::Message(absl::string_view line) {
  Clear();
  std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
  std::fflush(out_);
  Redraw();
}

void ProgressDisplay::Finish() {
  if (lines_shown_ > 0) std::fputs("\n", out_);
  lines_shown_ = 0;
  training_.clear();
  std::fflush(out_);
}

}  // namespace cohort
