// The heartbeat silence tracker on a fake clock: no warning while ranks beat, one warning per
// silence, one line when a silent rank comes back, and no watching of finished or unknown ranks.
#include "runtime/control/heartbeat_monitor.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

// Monotonic seconds that move only when the test says so.
struct FakeClock {
  double now = 1000.0;
  double Advance(double seconds) { return now += seconds; }
};

std::string SilentLine(int rank, int seconds, int batch) {
  return "rank " + std::to_string(rank) + " has sent no heartbeat for " + std::to_string(seconds) +
         " s (it had trained " + std::to_string(batch) +
         " batches, as it last said); it may be stuck in the plugin or in a collective";
}

TEST(HeartbeatMonitorTest, SaysNothingWhileEveryRankBeats) {
  FakeClock clock;
  HeartbeatMonitor monitor;
  for (uint64_t second = 0; second < 300; ++second) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      EXPECT_EQ(monitor.Beat(rank, second * 10, clock.now), std::nullopt);
    }
    EXPECT_THAT(monitor.Check(clock.Advance(1.0)), IsEmpty());
  }
}

TEST(HeartbeatMonitorTest, WarnsOnceWhenARankFallsSilent) {
  FakeClock clock;
  HeartbeatMonitor monitor;
  const double start = clock.now;
  monitor.Beat(0, 800, start);
  monitor.Beat(1, 812, start);
  // Rank 0 keeps beating; rank 1 says nothing more.
  for (int second = 1; second < 30; ++second) {
    monitor.Beat(0, 800 + static_cast<uint64_t>(second), clock.Advance(1.0));
    EXPECT_THAT(monitor.Check(clock.now), IsEmpty()) << "after " << second << " s";
  }
  EXPECT_THAT(monitor.Check(start + 29.999), IsEmpty());
  EXPECT_THAT(monitor.Check(start + 30.0), ElementsAre(SilentLine(1, 30, 812)));
  // Said once: neither later ticks nor a longer silence repeat it.
  for (double later : {30.05, 31.0, 60.0, 3600.0}) {
    monitor.Beat(0, 900, start + later);
    EXPECT_THAT(monitor.Check(start + later), IsEmpty()) << "at " << later << " s";
  }
  EXPECT_TRUE(monitor.Watches(1));
}

// A loop faster than the heartbeat interval beats once at its start: the batches its reports
// name since are the last it said (a warning used to say 0 batches of a rank stuck at 130).
TEST(HeartbeatMonitorTest, NamesTheBatchesTheRankLastReportedWithoutBeating) {
  HeartbeatMonitor monitor;
  monitor.Reported(0, 50);  // not watched yet: nothing to keep
  EXPECT_FALSE(monitor.Watches(0));
  monitor.Beat(0, 0, 10.0);
  monitor.Reported(0, 100);
  monitor.Reported(0, 60);  // an older report never lowers it
  EXPECT_THAT(monitor.Check(10.0 + 29.0), IsEmpty()) << "a report is no sign of life";
  EXPECT_THAT(monitor.Check(10.0 + 30.0), ElementsAre(SilentLine(0, 30, 100)));
}

TEST(HeartbeatMonitorTest, ReportsWholeSecondsOfSilenceRoundedDown) {
  HeartbeatMonitor monitor;
  monitor.Beat(2, 5, 10.0);
  EXPECT_THAT(monitor.Check(10.0 + 30.97), ElementsAre(SilentLine(2, 30, 5)));
  EXPECT_THAT(monitor.Beat(2, 6, 10.0 + 42.99),
              Optional(std::string(
                  "rank 2 is sending heartbeats again after 42 s of silence (at batch 6)")));
}

TEST(HeartbeatMonitorTest, AnnouncesAResumptionOnceAndWatchesForTheNextSilence) {
  FakeClock clock;
  HeartbeatMonitor monitor;
  const double start = clock.now;
  monitor.Beat(1, 812, start);
  ASSERT_THAT(monitor.Check(start + 30.0), ElementsAre(SilentLine(1, 30, 812)));

  EXPECT_THAT(monitor.Beat(1, 813, start + 42.0),
              Optional(std::string(
                  "rank 1 is sending heartbeats again after 42 s of silence (at batch 813)")));
  EXPECT_EQ(monitor.Beat(1, 820, start + 43.0), std::nullopt);
  EXPECT_THAT(monitor.Check(start + 72.9), IsEmpty());
  // A second silence is a new event, reported from the latest beat.
  EXPECT_THAT(monitor.Check(start + 73.0), ElementsAre(SilentLine(1, 30, 820)));
}

TEST(HeartbeatMonitorTest, EveryBeatRestartsTheSilence) {
  HeartbeatMonitor monitor;
  monitor.Beat(0, 1, 0.0);
  EXPECT_EQ(monitor.Beat(0, 2, 29.0), std::nullopt);
  EXPECT_THAT(monitor.Check(58.9), IsEmpty());
  EXPECT_THAT(monitor.Check(59.0), ElementsAre(SilentLine(0, 30, 2)));
}

TEST(HeartbeatMonitorTest, ReportsEverySilentRankInRankOrder) {
  HeartbeatMonitor monitor(/*silent_warning_seconds=*/5.0);
  monitor.Beat(3, 30, 0.0);
  monitor.Beat(0, 0, 0.0);
  monitor.Beat(1, 10, 0.0);
  monitor.Beat(2, 20, 0.0);
  monitor.Beat(1, 11, 3.0);  // rank 1 is still fine at 5 s
  EXPECT_THAT(monitor.Check(5.0),
              ElementsAre(SilentLine(0, 5, 0), SilentLine(2, 5, 20), SilentLine(3, 5, 30)));
  EXPECT_THAT(monitor.Check(8.0), ElementsAre(SilentLine(1, 5, 11)));
  EXPECT_THAT(monitor.Check(100.0), IsEmpty());
}

TEST(HeartbeatMonitorTest, ForgottenRanksMayFallSilent) {
  HeartbeatMonitor monitor;
  monitor.Beat(0, 300, 0.0);
  monitor.Beat(1, 300, 0.0);
  monitor.Forget(1);  // it finished; rank 0 goes on writing the last checkpoint
  EXPECT_FALSE(monitor.Watches(1));
  EXPECT_THAT(monitor.Check(100.0), ElementsAre(SilentLine(0, 100, 300)));

  // Forgetting a silent rank forgets its silence too: a new beat is not a resumption.
  monitor.Forget(0);
  EXPECT_EQ(monitor.Beat(0, 0, 200.0), std::nullopt);
  EXPECT_TRUE(monitor.Watches(0));
  monitor.Forget(7);  // never seen: nothing happens
  EXPECT_THAT(monitor.Check(229.0), IsEmpty());
}

TEST(HeartbeatMonitorTest, RanksThatNeverBeatAreNotWatched) {
  HeartbeatMonitor monitor;
  EXPECT_FALSE(monitor.Watches(0));
  EXPECT_THAT(monitor.Check(1e9), IsEmpty());
}

}  // namespace
}  // namespace cohort
