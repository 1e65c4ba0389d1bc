#include "harness/cohort/run/progress_display.h"

#include <unistd.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cohort {

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const uint64_t total = static_cast<uint64_t>(seconds + 0.5);
  const uint64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  return h > 0 ? absl::StrFormat("%d:%02d:%02d", h, m, s) : absl::StrFormat("%d:%02d", m, s);
}

ProgressDisplay::ProgressDisplay(std::FILE* out) : out_(out), terminal_(::isatty(fileno(out))) {}

std::string ProgressDisplay::ProgressLine() const {
  std::string line = last_.total_batches == 0  // not known yet
                         ? absl::StrFormat("trial %d  %d batches  loss %.4f", last_.trial_id,
                                           last_.batches, last_.latest_loss)
                         : absl::StrFormat("trial %d  %d/%d batches  loss %.4f", last_.trial_id,
                                           last_.batches, last_.total_batches, last_.latest_loss);
  if (last_.records_per_second > 0 && last_.total_batches >= last_.batches) {
    const double batches_per_record =
        last_.batches > 0 ? static_cast<double>(last_.batches) / static_cast<double>(last_.records)
                          : 0;
    const double remaining = static_cast<double>(last_.total_batches - last_.batches) /
                             (last_.records_per_second * batches_per_record);
    absl::StrAppendFormat(&line, "  %.0f records/s  ETA %s", last_.records_per_second,
                          FormatDuration(remaining));
  }
  return line;
}

void ProgressDisplay::Redraw() {
  if (!terminal_ || !have_progress_) return;
  std::fprintf(out_, "\r\033[K%s", ProgressLine().c_str());
  std::fflush(out_);
  line_shown_ = true;
}

void ProgressDisplay::Update(const ProgressReport& progress) {
  last_ = progress;
  have_progress_ = true;
  Redraw();
}

void ProgressDisplay::Metrics(const MetricsReport& report) {
  if (report.kind == ReportKind::kTraining) {
    if (terminal_) return;  // the redrawn line shows it
    // A plain line per report, with the report's own batch count and mean loss.
    last_.trial_id = report.trial_id;
    last_.batches = report.batches;
    last_.records = report.records;
    for (const NamedValue& metric : report.metrics) {
      if (metric.name == "loss") last_.latest_loss = metric.value;
    }
    Message(ProgressLine());
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
  if (line_shown_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
  line_shown_ = false;
  Redraw();
}

void ProgressDisplay::Finish() {
  if (line_shown_) std::fputs("\n", out_);
  line_shown_ = false;
  have_progress_ = false;
  std::fflush(out_);
}

}  // namespace cohort
