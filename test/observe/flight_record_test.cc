// FlightRecorder and ReadFlightRecord: what a rank writes is read back by another reader while it
// runs (the file is shared memory), the ring keeps the newest entries, each group counts its own
// sequence, the heartbeat advances, and a record of another version or a cut one is refused.
// Also the flight files' names (flight_files.h).
#include "runtime/observe/flight_record.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/observe/flight_files.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr FlightRecorder::Identity kRank1{
    .trial_id = 7, .task_id = 12, .attempt = 2, .rank = 1, .size = 2};

std::unique_ptr<FlightRecorder> Open(const std::string& path, uint32_t capacity = 8,
                                     double heartbeat = 0.1) {
  absl::StatusOr<std::unique_ptr<FlightRecorder>> recorder =
      FlightRecorder::Create(path, kRank1, capacity, heartbeat);
  EXPECT_TRUE(recorder.ok()) << recorder.status();
  return *std::move(recorder);
}

TEST(FlightRecordTest, ReadWhileTheRankRuns) {
  TempFolder folder;
  const std::string path = folder.path() + "/rank1.flight";
  std::unique_ptr<FlightRecorder> recorder = Open(path);
  const uint64_t first = recorder->Enter(
      kHostGroup, CollectiveKind::kAllreduce, "float32", 4096,
      {.purpose = CollectivePurpose::kGradientBucket, .bucket = 2, .batch = 40}, 1234);
  recorder->Leave(first, /*ok=*/true);
  recorder->Enter(kGradientGroup, CollectiveKind::kAllgather, "bytes", 24,
                  {.purpose = CollectivePurpose::kStepCheck, .batch = 41}, 0);

  const absl::StatusOr<FlightRecord> record = ReadFlightRecord(path);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->identity.trial_id, 7u);
  EXPECT_EQ(record->identity.task_id, 12u);
  EXPECT_EQ(record->identity.attempt, 2u);
  EXPECT_EQ(record->identity.rank, 1u);
  EXPECT_EQ(record->identity.size, 2u);
  EXPECT_EQ(record->pid, static_cast<uint32_t>(::getpid()));
  EXPECT_FALSE(record->ended);
  ASSERT_EQ(record->entries.size(), 2u);
  const FlightEntry& done = record->entries[0];
  EXPECT_EQ(done.seq, 1u);
  EXPECT_EQ(done.group, kHostGroup);
  EXPECT_EQ(done.kind, CollectiveKind::kAllreduce);
  EXPECT_EQ(done.purpose, CollectivePurpose::kGradientBucket);
  EXPECT_EQ(done.bucket, 2);
  EXPECT_EQ(done.batch, 40);
  EXPECT_EQ(done.bytes, 4096u);
  EXPECT_STREQ(done.dtype, "float32");
  EXPECT_EQ(done.state, FlightState::kFinished);
  EXPECT_EQ(done.enqueued_ns, 1234);
  EXPECT_GE(done.finished_ns, done.started_ns);
  const FlightEntry& running = record->entries[1];
  EXPECT_EQ(running.seq, 1u);  // the first of its own group
  EXPECT_EQ(running.group, kGradientGroup);
  EXPECT_EQ(running.state, FlightState::kEntered);
  EXPECT_EQ(running.finished_ns, 0);
  EXPECT_EQ(running.enqueued_ns, running.started_ns);
}

TEST(FlightRecordTest, TheRingKeepsTheNewestAndAFailureIsMarked) {
  TempFolder folder;
  const std::string path = folder.path() + "/ring.flight";
  std::unique_ptr<FlightRecorder> recorder = Open(path, /*capacity=*/4);
  for (int i = 0; i < 10; ++i) {
    const uint64_t entry =
        recorder->Enter(kHostGroup, CollectiveKind::kBroadcast, "bytes", 8, {}, 0);
    recorder->Leave(entry, /*ok=*/i != 9);
  }
  const absl::StatusOr<FlightRecord> record = ReadFlightRecord(path);
  ASSERT_TRUE(record.ok()) << record.status();
  std::vector<uint64_t> seqs;
  for (const FlightEntry& entry : record->entries) seqs.push_back(entry.seq);
  EXPECT_THAT(seqs, ElementsAre(7, 8, 9, 10));
  EXPECT_EQ(record->entries.back().state, FlightState::kFailed);
}

TEST(FlightRecordTest, TheHeartbeatAdvancesAndTheEndIsMarked) {
  TempFolder folder;
  const std::string path = folder.path() + "/beat.flight";
  std::unique_ptr<FlightRecorder> recorder = Open(path, 4, /*heartbeat=*/0.01);
  const int64_t first = ReadFlightRecord(path)->alive_ns;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ReadFlightRecord(path)->alive_ns == first && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(ReadFlightRecord(path)->alive_ns, first);
  recorder.reset();
  const absl::StatusOr<FlightRecord> ended = ReadFlightRecord(path);
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_TRUE(ended->ended);
}

TEST(FlightRecordTest, AnotherVersionOrACutFileIsRefusedNamingIt) {
  TempFolder folder;
  const std::string path = folder.path() + "/old.flight";
  Open(path).reset();
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string other = bytes;
  const uint32_t version = kFlightVersion + 1;
  std::memcpy(other.data() + 8, &version, sizeof(version));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << other;
  absl::StatusOr<FlightRecord> record = ReadFlightRecord(path);
  EXPECT_THAT(
      std::string(record.status().message()),
      HasSubstr(absl::StrCat("version ", version, "; this build reads version ", kFlightVersion)));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 1);
  record = ReadFlightRecord(path);
  EXPECT_TRUE(absl::IsDataLoss(record.status())) << record.status();
  EXPECT_THAT(std::string(record.status().message()), HasSubstr(path));
  EXPECT_FALSE(ReadFlightRecord(folder.path() + "/none.flight").ok());
}

TEST(FlightFilesTest, EachTaskFindsItsOwnRanks) {
  TempFolder folder;
  const std::string root = folder.path() + "/experiment-3";
  EXPECT_THAT(TaskFlightPaths(root, 1, 2), IsEmpty());
  EXPECT_FALSE(LatestFlightTask(root, 1).has_value());
  const std::string a = *RankFlightPath(root, 1, 2, 0);
  EXPECT_EQ(a, root + "/.flight/trial1-task2-rank0.flight");
  const std::string b = *RankFlightPath(root, 1, 2, 1);
  const std::string later = *RankFlightPath(root, 1, 12, 0);
  const std::string other = *RankFlightPath(root, 11, 2, 0);
  for (const std::string& path : {a, b, later, other}) std::ofstream(path) << "x";
  EXPECT_THAT(TaskFlightPaths(root, 1, 2), ElementsAre(a, b));
  EXPECT_THAT(TaskFlightPaths(root, 1, 12), ElementsAre(later));
  EXPECT_EQ(LatestFlightTask(root, 1), 12u);
  EXPECT_EQ(LatestFlightTask(root, 11), 2u);
  RemoveTaskFlights(root, 1, 2);
  EXPECT_THAT(TaskFlightPaths(root, 1, 2), IsEmpty());
  EXPECT_THAT(TaskFlightPaths(root, 11, 2), ElementsAre(other));
}

}  // namespace
}  // namespace cohort
