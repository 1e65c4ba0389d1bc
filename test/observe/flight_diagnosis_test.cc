// DiagnoseFlights: the first collective the ranks part at, the ranks missing from it, the ranks
// whose record went silent, and ranks that called different collectives under one number.
#include "runtime/observe/flight_diagnosis.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kNow = 1'800'000'000 * kSecond;

FlightEntry Entry(uint64_t seq, FlightState state, CollectiveKind kind = CollectiveKind::kAllreduce,
                  uint64_t bytes = 4096, uint8_t group = kHostGroup) {
  FlightEntry entry;
  entry.index = seq;
  entry.seq = seq;
  entry.group = group;
  entry.kind = kind;
  entry.bytes = bytes;
  entry.state = state;
  entry.purpose = CollectivePurpose::kGradientBucket;
  entry.bucket = 0;
  entry.batch = static_cast<int64_t>(seq) - 1;
  entry.started_ns = kNow - 10 * kSecond + static_cast<int64_t>(seq);
  std::strcpy(entry.dtype, "float32");
  return entry;
}

// Rank `rank` of 2, its collectives 1..finished done and, if `entered_next`, the next entered.
FlightRecord Rank(uint32_t rank, uint64_t finished, bool entered_next, int64_t alive = kNow) {
  FlightRecord record;
  record.identity = {.trial_id = 1, .task_id = 1, .attempt = 0, .rank = rank, .size = 2};
  record.pid = 100 + rank;
  record.alive_ns = alive;
  for (uint64_t seq = 1; seq <= finished; ++seq) {
    record.entries.push_back(Entry(seq, FlightState::kFinished));
  }
  if (entered_next) record.entries.push_back(Entry(finished + 1, FlightState::kEntered));
  return record;
}

TEST(FlightDiagnosisTest, ARankMissingFromTheCollectiveTheOthersWaitIn) {
  const FlightDiagnosis found =
      DiagnoseFlights({Rank(0, 56, true), Rank(1, 56, false, kNow - 5 * kSecond)}, 2);
  EXPECT_EQ(
      found.collective,
      "host collective #57 (allreduce of 4096 bytes of float32: gradient bucket 1, batch 57)");
  EXPECT_THAT(found.entered, ElementsAre(0));
  EXPECT_THAT(found.missing, ElementsAre(1));
  EXPECT_THAT(found.silent, ElementsAre(1));
  EXPECT_THAT(found.summary, HasSubstr("rank 0 entered it"));
  EXPECT_THAT(found.summary, HasSubstr("rank 1 is missing from it (rank 1: its last: host "
                                       "collective #56"));
  EXPECT_THAT(found.summary, HasSubstr("rank 1 has gone silent"));
  ASSERT_EQ(found.ranks.size(), 2u);
  EXPECT_THAT(found.ranks[1], HasSubstr("last stamped 5.0 s before the newest"));
}

TEST(FlightDiagnosisTest, EveryRankInsideTheCollectiveAndOneSilent) {
  const FlightDiagnosis found =
      DiagnoseFlights({Rank(0, 9, true), Rank(1, 9, true, kNow - 3 * kSecond)}, 2);
  EXPECT_THAT(found.collective, HasSubstr("#10"));
  EXPECT_THAT(found.entered, ElementsAre(0, 1));
  EXPECT_THAT(found.missing, IsEmpty());
  EXPECT_THAT(found.silent, ElementsAre(1));
  EXPECT_THAT(found.summary, HasSubstr("every rank entered it and not all finished it"));
}

TEST(FlightDiagnosisTest, ARankKilledOutsideCohortIsTheLikelyCauseThoughItsRecordIsFresh) {
  // Rank 1 died by SIGKILL inside #10 and rank 0 failed at once: both records stamped alike.
  const std::vector<FlightRecord> records = {Rank(0, 9, true), Rank(1, 9, true)};
  EXPECT_THAT(DiagnoseFlights(records, 2).silent, IsEmpty()) << "the records alone cannot tell";

  const FlightDiagnosis found = DiagnoseFlights(records, 2, {{1, "was killed by signal 9"}});
  EXPECT_THAT(found.collective, HasSubstr("#10"));
  EXPECT_THAT(found.entered, ElementsAre(0, 1));
  EXPECT_THAT(found.silent, ElementsAre(1));
  EXPECT_THAT(found.summary, HasSubstr("every rank entered it and not all finished it. rank 1 was "
                                       "killed by signal 9 in it, the likely cause."));
  ASSERT_EQ(found.ranks.size(), 2u);
  EXPECT_THAT(found.ranks[1], HasSubstr("; its process was killed by signal 9"));
}

// Ranks that ended alike, in the same place, are told together (two ranks of one lost agent).
TEST(FlightDiagnosisTest, RanksThatEndedAlikeAreToldTogether) {
  const std::vector<FlightRecord> records = {Rank(0, 9, true), Rank(1, 9, true)};
  const FlightDiagnosis found = DiagnoseFlights(
      records, 2,
      {{0, "ended with its agent node-1 (lost)"}, {1, "ended with its agent node-1 (lost)"}});
  EXPECT_THAT(found.summary, HasSubstr(" ranks 0, 1 each ended with its agent node-1 (lost) in it, "
                                       "the likely cause."));
}

TEST(FlightDiagnosisTest, AKilledRankIsNamedWithTheCollectiveItDiedInBesideASilentOne) {
  // Rank 2 died in a collective of the gradient group while the host group parts at #4, which
  // rank 1 never reached and stopped stamping.
  FlightRecord zero = Rank(0, 3, true);
  zero.identity.size = 3;
  FlightRecord one = Rank(1, 3, false, kNow - 4 * kSecond);
  FlightRecord two = Rank(2, 3, false);
  two.entries.push_back(
      Entry(1, FlightState::kEntered, CollectiveKind::kAllreduce, 1 << 20, kGradientGroup));
  two.entries.back().started_ns = kNow;  // after the host group parted
  const FlightDiagnosis found =
      DiagnoseFlights({zero, one, two}, 3, {{2, "exited with code 1 (found stopped)"}});
  EXPECT_THAT(found.collective, HasSubstr("host collective #4"));
  EXPECT_THAT(found.silent, ElementsAre(1, 2));
  EXPECT_THAT(found.summary,
              HasSubstr(" rank 2 exited with code 1 (found stopped) in gradient collective #1 "
                        "(allreduce of 1048576 bytes of float32: gradient bucket 1, batch 1); "
                        "rank 1 has gone silent (no flight record, or none stamped for 1 s: a "
                        "stopped or lost process), the likely cause."));
}

TEST(FlightDiagnosisTest, ARankWithoutARecordIsSilentAndMissing) {
  const FlightDiagnosis found = DiagnoseFlights({Rank(0, 3, true)}, 2);
  EXPECT_THAT(found.silent, ElementsAre(1));
  EXPECT_THAT(found.ranks[1], HasSubstr("rank 1: left no flight record"));
  // Rank 0 alone waits in #4; nothing says who is missing but the absent record.
  EXPECT_THAT(found.summary, HasSubstr("rank 1 has gone silent"));
}

TEST(FlightDiagnosisTest, RanksThatCalledDifferentCollectivesDisagreeOutright) {
  FlightRecord zero = Rank(0, 4, true);
  FlightRecord one = Rank(1, 3, false);
  one.entries.push_back(Entry(4, FlightState::kEntered, CollectiveKind::kBroadcast, 8));
  const FlightDiagnosis found = DiagnoseFlights({zero, one}, 2);
  EXPECT_THAT(found.summary, HasSubstr("host collective #4 is where the ranks disagree: rank 0 "
                                       "host collective #4 (allreduce of 4096 bytes"));
  EXPECT_THAT(found.summary, HasSubstr("rank 1 host collective #4 (broadcast of 8 bytes"));
}

TEST(FlightDiagnosisTest, RanksThatAgreeAndFinishedEverything) {
  const FlightDiagnosis found = DiagnoseFlights({Rank(0, 20, false), Rank(1, 20, false)}, 2);
  EXPECT_TRUE(found.collective.empty());
  EXPECT_THAT(found.silent, IsEmpty());
  EXPECT_THAT(found.summary, HasSubstr("every rank finished every collective it entered"));
}

TEST(FlightDiagnosisTest, TheOlderOfTwoGroupsPartingsIsReported) {
  // The gradient group waits since long before the host group's check started.
  FlightRecord zero = Rank(0, 5, true);
  FlightRecord one = Rank(1, 5, true);
  FlightEntry gradient =
      Entry(1, FlightState::kEntered, CollectiveKind::kAllreduce, 1 << 20, kGradientGroup);
  gradient.started_ns = kNow - 60 * kSecond;
  zero.entries.push_back(gradient);
  const FlightDiagnosis found = DiagnoseFlights({zero, one}, 2);
  EXPECT_THAT(found.collective, HasSubstr("gradient collective #1"));
  EXPECT_THAT(found.missing, ElementsAre(1));
}

}  // namespace
}  // namespace cohort
