// What the agent forwards of control protocol minor 1 and how often: progress thinned to one
// report a second per task (the first at once, the newest kept, a held-back one out when its
// second is up or at the end), and nothing of minor 1 to an orchestrator of minor 0.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/agent/orchestrator_minor.h"
#include "runtime/agent/progress_throttle.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::Optional;

ProgressReport AtBatch(uint64_t batches) {
  return ProgressReport{/*trial_id=*/3, batches, /*total_batches=*/1000,
                        batches * 16,   0.5,     800};
}

auto HasBatches(uint64_t batches) { return Optional(Field(&ProgressReport::batches, batches)); }

TEST(ProgressThrottleTest, LetsTheFirstReportThroughAtOnce) {
  ProgressThrottle throttle(/*interval_seconds=*/1.0);
  EXPECT_EQ(throttle.Due(100.0), std::nullopt) << "nothing kept yet";
  throttle.Keep(AtBatch(10));
  EXPECT_THAT(throttle.Due(100.0), HasBatches(10));
  EXPECT_EQ(throttle.Due(100.0), std::nullopt) << "it is no longer kept";
}

TEST(ProgressThrottleTest, LetsAtMostOneThroughPerIntervalAndTheNewestWins) {
  ProgressThrottle throttle(/*interval_seconds=*/1.0);
  throttle.Keep(AtBatch(10));
  ASSERT_THAT(throttle.Due(100.0), HasBatches(10));
  // Four reports a second, as a worker sends them: only the newest goes, a second after the last.
  std::vector<uint64_t> let_through;
  for (int tick = 1; tick <= 16; ++tick) {
    const double now = 100.0 + 0.25 * tick;
    throttle.Keep(AtBatch(10 + 10 * static_cast<uint64_t>(tick)));
    if (std::optional<ProgressReport> due = throttle.Due(now)) let_through.push_back(due->batches);
  }
  EXPECT_THAT(let_through, ElementsAre(50, 90, 130, 170));
}

TEST(ProgressThrottleTest, SendsAHeldBackReportWhenItsIntervalIsUpWithoutANewerOne) {
  ProgressThrottle throttle(/*interval_seconds=*/1.0);
  throttle.Keep(AtBatch(10));
  ASSERT_THAT(throttle.Due(100.0), HasBatches(10));
  throttle.Keep(AtBatch(20));  // then the worker falls quiet
  EXPECT_EQ(throttle.Due(100.2), std::nullopt);
  EXPECT_EQ(throttle.Due(100.999), std::nullopt);
  EXPECT_THAT(throttle.Due(101.0), HasBatches(20));
  EXPECT_EQ(throttle.Due(160.0), std::nullopt) << "said once";
  // After a long quiet spell the next report goes at once.
  throttle.Keep(AtBatch(30));
  EXPECT_THAT(throttle.Due(160.0), HasBatches(30));
}

TEST(ProgressThrottleTest, TakeHandsOverTheKeptReportWhateverTheTime) {
  ProgressThrottle throttle(/*interval_seconds=*/1.0);
  EXPECT_EQ(throttle.Take(), std::nullopt);
  throttle.Keep(AtBatch(10));
  ASSERT_THAT(throttle.Due(100.0), HasBatches(10));
  throttle.Keep(AtBatch(1000));
  EXPECT_THAT(throttle.Take(), HasBatches(1000));
  EXPECT_EQ(throttle.Take(), std::nullopt);
}

LogBatch MixedBatch() {
  return LogBatch{7,
                  {LogLine{0, LogStream::kStdout, 1.0, "epoch 1"},
                   LogLine{1, LogStream::kAgent, 2.0, "warning: rank 1 has sent no heartbeat"},
                   LogLine{1, LogStream::kStderr, 3.0, "loss is nan"}}};
}

TEST(KnownAtMinorTest, AMinorWithProgressGetsEverything) {
  const TaskProgress progress{7, AtBatch(10)};
  EXPECT_EQ(KnownAtMinor(progress, kControlMinorWithProgress), ControlMessage(progress));
  EXPECT_EQ(KnownAtMinor(MixedBatch(), kControlMinorWithProgress), ControlMessage(MixedBatch()));
  EXPECT_EQ(KnownAtMinor(progress, kControlMinorWithProgress + 1), ControlMessage(progress));
}

TEST(KnownAtMinorTest, OnlyMinorFiveOnGetsRestoredCheckpointReports) {
  TaskCheckpointReport restored{7, 3, "trial-3-batch-50", 50, 1600, 0, {}, true};
  for (uint16_t minor = 0; minor < kControlMinorWithRestoredCheckpoints; ++minor) {
    EXPECT_EQ(KnownAtMinor(restored, minor), std::nullopt) << "minor " << minor;
  }
  EXPECT_EQ(KnownAtMinor(restored, kControlMinorWithRestoredCheckpoints), ControlMessage(restored));
  restored.restored = false;
  EXPECT_EQ(KnownAtMinor(restored, 0), ControlMessage(restored))
      << "a written one goes to every minor";
}

TEST(KnownAtMinorTest, MinorZeroGetsNoProgress) {
  EXPECT_EQ(KnownAtMinor(TaskProgress{7, AtBatch(10)}, 0), std::nullopt);
}

TEST(KnownAtMinorTest, MinorZeroGetsLogBatchesWithoutTheAgentsLines) {
  const LogBatch expected{7,
                          {LogLine{0, LogStream::kStdout, 1.0, "epoch 1"},
                           LogLine{1, LogStream::kStderr, 3.0, "loss is nan"}}};
  EXPECT_EQ(KnownAtMinor(MixedBatch(), 0), ControlMessage(expected));
  const LogBatch only_agent{7, {LogLine{2, LogStream::kAgent, 1.0, "rank 2 is back"}}};
  EXPECT_EQ(KnownAtMinor(only_agent, 0), std::nullopt) << "no batch left to send";
}

TEST(KnownAtMinorTest, MinorZeroGetsEveryMinorZeroMessageUnchanged) {
  for (const ControlMessage& message :
       {ControlMessage(TaskStatus{7, TaskState::kRunning, {{0, 1234}}}),
        ControlMessage(TaskExit{7, 0, 0, 0, "completed", false}),
        ControlMessage(AgentHeartbeat{"node-3", 1.5e9, 2, {7}}), ControlMessage(Ack{})}) {
    EXPECT_EQ(KnownAtMinor(message, 0), message) << DescribeControlMessage(message);
  }
}

}  // namespace
}  // namespace cohort
