// Worker output on its way to the orchestrator: lines cut from chunks of any size (long lines in
// pieces), and gathered into LogBatch messages by count and by age.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/agent/line_splitter.h"
#include "runtime/agent/log_batcher.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

TEST(LineSplitterTest, JoinsChunksIntoLines) {
  LineSplitter splitter;
  EXPECT_THAT(splitter.Add("epoch 1\nepo"), ElementsAre("epoch 1"));
  EXPECT_THAT(splitter.Add("ch"), IsEmpty());
  EXPECT_THAT(splitter.Add(" 2\n\nlast"), ElementsAre("epoch 2", ""));
  EXPECT_THAT(splitter.Finish(), Optional(std::string("last")));
  EXPECT_EQ(splitter.Finish(), std::nullopt);
}

TEST(LineSplitterTest, CutsLongLinesIntoPieces) {
  LineSplitter splitter(/*max_line_bytes=*/4);
  EXPECT_THAT(splitter.Add("abcdefghij\n"), ElementsAre("abcd", "efgh", "ij"));
  // A newline right after a full piece ends that line; it adds no empty one.
  EXPECT_THAT(splitter.Add("wxyz\nok\n"), ElementsAre("wxyz", "ok"));
  EXPECT_EQ(splitter.Finish(), std::nullopt);
}

LogLine Line(uint32_t rank, std::string text) {
  return LogLine{rank, LogStream::kStdout, 1.5, std::move(text)};
}

TEST(LogBatcherTest, ReturnsABatchOnceItIsFull) {
  LogBatcher batcher(/*task_id=*/7, /*max_lines=*/3, /*max_delay_seconds=*/0.2);
  EXPECT_EQ(batcher.Add(Line(0, "a"), 10.0), std::nullopt);
  EXPECT_EQ(batcher.Add(Line(1, "b"), 10.0), std::nullopt);
  const std::optional<LogBatch> full = batcher.Add(Line(0, "c"), 10.0);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->task_id, 7u);
  EXPECT_THAT(full->lines, ElementsAre(Line(0, "a"), Line(1, "b"), Line(0, "c")));
  EXPECT_EQ(batcher.size(), 0u);
}

TEST(LogBatcherTest, ReturnsABatchOnceItsOldestLineWaitedLongEnough) {
  LogBatcher batcher(/*task_id=*/7, /*max_lines=*/64, /*max_delay_seconds=*/0.2);
  EXPECT_EQ(batcher.Due(10.0), std::nullopt) << "nothing held";
  EXPECT_EQ(batcher.Add(Line(0, "a"), 10.0), std::nullopt);
  EXPECT_EQ(batcher.Add(Line(0, "b"), 10.15), std::nullopt);
  EXPECT_EQ(batcher.Due(10.1), std::nullopt);
  const std::optional<LogBatch> due = batcher.Due(10.21);
  ASSERT_TRUE(due.has_value());
  EXPECT_THAT(due->lines, ElementsAre(Line(0, "a"), Line(0, "b")));
  // The age restarts with the next batch's first line.
  EXPECT_EQ(batcher.Add(Line(0, "c"), 10.3), std::nullopt);
  EXPECT_EQ(batcher.Due(10.45), std::nullopt);
  EXPECT_NE(batcher.Due(10.51), std::nullopt);
}

TEST(LogBatcherTest, TakeEmptiesItWhateverItHolds) {
  LogBatcher batcher(/*task_id=*/9);
  EXPECT_EQ(batcher.Take(), std::nullopt);
  EXPECT_EQ(batcher.Add(Line(1, "x"), 0.0), std::nullopt);
  const std::optional<LogBatch> rest = batcher.Take();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->task_id, 9u);
  EXPECT_THAT(rest->lines, ElementsAre(Line(1, "x")));
  EXPECT_EQ(batcher.Take(), std::nullopt);
}

}  // namespace
}  // namespace cohort
