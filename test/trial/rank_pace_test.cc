// RankPaceTracker: every rank's pace gathered over a real Gloo group of threads, scored against
// the fastest rank and against each rank's own best of the attempt.
#include "runtime/trial/rank_pace.h"

#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "test/collective/rank_threads.h"

namespace cohort {
namespace {

TEST(RankPaceTest, ScoresAgainstTheFastestAndTheRanksOwnBest) {
  RankPaceTracker tracker;
  // [compute, step] seconds per batch, by rank.
  std::vector<RankPace> paces = tracker.Score({{0.004, 0.005}, {0.018, 0.02}});
  ASSERT_EQ(paces.size(), 2u);
  EXPECT_EQ(paces[0].rank, 0u);
  EXPECT_DOUBLE_EQ(paces[0].vs_fastest, 1.0);
  EXPECT_DOUBLE_EQ(paces[1].vs_fastest, 0.25);
  EXPECT_DOUBLE_EQ(paces[1].compute_seconds, 0.018);
  EXPECT_DOUBLE_EQ(paces[1].step_seconds, 0.02);
  EXPECT_DOUBLE_EQ(paces[1].vs_best, 1.0);  // its first report is its best
  // Rank 0 slows to half its best; rank 1 recovers to the same pace: both as fast as each other.
  paces = tracker.Score({{0.008, 0.01}, {0.008, 0.01}});
  EXPECT_DOUBLE_EQ(paces[0].vs_fastest, 1.0);
  EXPECT_DOUBLE_EQ(paces[1].vs_fastest, 1.0);
  EXPECT_DOUBLE_EQ(paces[0].vs_best, 0.5);
  EXPECT_DOUBLE_EQ(paces[1].vs_best, 1.0);
  // A rank that took no time is as fast as can be, and does not divide by zero.
  paces = tracker.Score({{0, 0}, {0.008, 0.01}});
  EXPECT_DOUBLE_EQ(paces[0].vs_fastest, 1.0);
  EXPECT_DOUBLE_EQ(paces[1].vs_fastest, 0.0);
}

TEST(RankPaceTest, EveryRankGathersAndRankZeroScores) {
  InMemoryRendezvousStore store;
  std::vector<std::vector<RankPace>> gathered(3);
  const std::vector<absl::Status> results = RunRanks(3, [&](uint32_t rank) -> absl::Status {
    absl::StatusOr<std::unique_ptr<CollectiveBackend>> group =
        CreateGlooBackend(rank, 3, store, GlooOptions{});
    if (!group.ok()) return group.status();
    // Over 5 batches rank r spends (r + 1) x 10 ms per batch in the plugin, and 2 ms per batch
    // in data and the optimizer step together.
    const double compute = 0.01 * (rank + 1) * 5;
    const std::vector<NamedValue> timings = {
        {"data", 0.01}, {"compute", compute}, {"exchange_wait", 9.0}, {"optimizer", 0.01}};
    RankPaceTracker tracker;
    absl::StatusOr<std::vector<RankPace>> paces = tracker.Gather(**group, timings, 5);
    if (!paces.ok()) return paces.status();
    gathered[rank] = *paces;
    return absl::OkStatus();
  });
  for (const absl::Status& status : results) ASSERT_TRUE(status.ok()) << status;
  for (const std::vector<RankPace>& paces : gathered) {
    ASSERT_EQ(paces.size(), 3u);
    // Waiting for the others (exchange_wait) is not the rank's own work.
    EXPECT_NEAR(paces[0].step_seconds, 0.014, 1e-12);
    EXPECT_NEAR(paces[2].compute_seconds, 0.03, 1e-12);
    EXPECT_NEAR(paces[2].step_seconds, 0.034, 1e-12);
    EXPECT_NEAR(paces[2].vs_fastest, 0.014 / 0.034, 1e-12);
  }
}

}  // namespace
}  // namespace cohort
