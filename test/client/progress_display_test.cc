// ProgressDisplay, read off the screen a terminal would show for its output: a line per trial in
// training, redrawn in place, the trials in order; messages above them; a trial's line gone when
// its task ends; lines cut to the terminal's width; at most kMaxTrialLines lines of trials; on a
// pipe, plain lines at each training report.
#include "harness/cohort/run/progress_display.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The rows a terminal shows after `bytes`: carriage return, line feed, and the two sequences the
// display uses (ESC[K erases to the end of the row, ESC[A moves up a row). Trailing empty rows are
// dropped.
std::vector<std::string> Screen(const std::string& bytes) {
  std::vector<std::string> rows(1);
  size_t row = 0, col = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      if (++row == rows.size()) rows.emplace_back();
      col = 0;
    } else if (c == '\033') {
      const std::string sequence = bytes.substr(i, 3);
      if (sequence == "\033[K") {
        rows[row].resize(std::min(rows[row].size(), col));
      } else if (sequence == "\033[A") {
        EXPECT_GT(row, 0u) << "moved above the first row";
        if (row > 0) --row;
      } else {
        ADD_FAILURE() << "unexpected escape sequence at byte " << i;
      }
      i += 2;
    } else {
      if (rows[row].size() <= col) rows[row].resize(col + 1, ' ');
      rows[row][col++] = c;
    }
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

class ProgressDisplayTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (file_ != nullptr) std::fclose(file_);
  }

  ProgressDisplay Terminal(size_t width = 0) { return ProgressDisplay(Open(), true, width); }
  ProgressDisplay Pipe() { return ProgressDisplay(Open(), false, 0); }

  std::string Output() {
    std::fflush(file_);
    std::rewind(file_);
    std::string bytes;
    char buffer[4096];
    while (const size_t n = std::fread(buffer, 1, sizeof(buffer), file_)) bytes.append(buffer, n);
    return bytes;
  }

  static ProgressReport Progress(uint64_t trial, uint64_t batches, double loss) {
    ProgressReport progress;
    progress.trial_id = trial;
    progress.batches = batches;
    progress.total_batches = 5000;
    progress.records = batches * 32;
    progress.latest_loss = loss;
    return progress;
  }

  // A training report of `trial` after `batches` (32 records each) with its mean loss.
  static MetricsReport Training(uint64_t trial, uint64_t batches, double loss) {
    MetricsReport report;
    report.trial_id = trial;
    report.kind = ReportKind::kTraining;
    report.batches = batches;
    report.records = batches * 32;
    report.metrics = {{"loss", loss}};
    return report;
  }

 private:
  std::FILE* Open() {
    file_ = std::tmpfile();
    EXPECT_NE(file_, nullptr);
    return file_;
  }
  std::FILE* file_ = nullptr;
};

TEST_F(ProgressDisplayTest, EachTrialInTrainingHasALineRedrawnInPlace) {
  ProgressDisplay display = Terminal();
  for (uint64_t step = 1; step <= 5; ++step) {
    display.Update(Progress(2, step * 100, 0.5));
    display.Update(Progress(1, step * 120, 0.25));
  }
  EXPECT_THAT(Screen(Output()),
              ElementsAre("trial 1  600/5000 batches", "trial 2  500/5000 batches"));
}

// The line's loss is the latest training report's mean (a batch's own loss, which progress
// carries, is no report's), and a report newer than the throttled progress moves it on.
TEST_F(ProgressDisplayTest, ATerminalLineShowsTheLatestReportsLossAndBatches) {
  ProgressDisplay display = Terminal();
  display.Update(Progress(1, 1, 0.7226));
  display.Metrics(Training(1, 200, 0.9005));
  EXPECT_THAT(Screen(Output()), ElementsAre("trial 1  200/5000 batches  loss 0.9005"));
  display.Update(Progress(1, 250, 0.1));
  EXPECT_THAT(Screen(Output()), ElementsAre("trial 1  250/5000 batches  loss 0.9005"));
}

TEST_F(ProgressDisplayTest, MessagesGoAboveAndAnEndedTrialsLineGoes) {
  ProgressDisplay display = Terminal();
  display.Update(Progress(1, 100, 0.25));
  display.Update(Progress(2, 100, 0.5));
  display.Message("trial 1 validation after 100 batches: loss=0.2");
  display.Update(Progress(1, 200, 0.2));
  display.TrialEnded(1);
  display.Update(Progress(2, 300, 0.4));
  EXPECT_THAT(Screen(Output()), ElementsAre("trial 1 validation after 100 batches: loss=0.2",
                                            "trial 2  300/5000 batches"));
  display.TrialEnded(2);
  display.Message("experiment done");
  display.Finish();
  EXPECT_THAT(Screen(Output()),
              ElementsAre("trial 1 validation after 100 batches: loss=0.2", "experiment done"));
}

TEST_F(ProgressDisplayTest, LinesAreCutToTheTerminalAndTheirCountIsBounded) {
  ProgressDisplay display = Terminal(/*width=*/20);
  for (uint64_t trial = 1; trial <= ProgressDisplay::kMaxTrialLines + 3; ++trial) {
    display.Update(Progress(trial, 10, 1.0));
  }
  const std::vector<std::string> screen = Screen(Output());
  ASSERT_THAT(screen, SizeIs(ProgressDisplay::kMaxTrialLines + 1));
  EXPECT_EQ(screen[0], "trial 1  10/5000 ba");
  for (const std::string& row : screen) EXPECT_LE(row.size(), 19u) << row;
  EXPECT_EQ(screen.back(), "... and 3 more tria");  // cut as well
}

TEST_F(ProgressDisplayTest, APipeGetsAPlainLinePerTrainingReportAndNoRedraws) {
  ProgressDisplay display = Pipe();
  display.Update(Progress(1, 100, 0.25));
  display.Update(Progress(2, 100, 0.5));
  EXPECT_THAT(Output(), IsEmpty());
  display.Metrics(Training(2, 200, 0.375));
  const std::string output = Output();
  EXPECT_EQ(output, "trial 2  200/5000 batches  loss 0.3750\n");
  EXPECT_THAT(output, Not(HasSubstr("\033")));
}

TEST_F(ProgressDisplayTest, APlainLineShowsItsOwnReportsPaceNotTheLastProgresses) {
  ProgressDisplay display = Pipe();
  ProgressReport progress = Progress(1, 100, 0.25);
  progress.records_per_second = 1000;  // a progress message from reports ago
  display.Update(progress);
  MetricsReport report = Training(1, 300, 0.125);
  report.records_per_second = 3200;  // 100 batches a second: 4700 to go
  display.Metrics(report);
  EXPECT_EQ(Output(), "trial 1  300/5000 batches  loss 0.1250  3200 records/s  ETA 0:47\n");
}

}  // namespace
}  // namespace cohort
