// TimelineMerger: requests are merged on its own thread, in order, from every rank file of the
// trial; each is reported once by TakeDone; busy() holds until then; the destructor carries out
// what was asked before it.
#include "runtime/orchestrator/timeline_merger.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/observe/timeline_files.h"
#include "runtime/observe/trace_writer.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Rank `rank`'s timeline of trial `trial_id` under `root`, with one training slice.
void WriteRank(const std::string& root, uint64_t trial_id, uint32_t rank) {
  auto trace = TraceWriter::Open(*RankTimelinePath(root, trial_id, 0, rank, 1), rank, 0);
  ASSERT_TRUE(trace.ok());
  (*trace)->Complete(TraceWriter::kTrainingThread, "inside the plugin's train_batch", 1, 2, 1);
}

std::vector<TimelineMerger::Done> WaitForDone(TimelineMerger& merger, size_t count) {
  std::vector<TimelineMerger::Done> done;
  for (int i = 0; i < 1000 && done.size() < count; ++i) {
    for (TimelineMerger::Done& d : merger.TakeDone()) done.push_back(std::move(d));
    if (done.size() < count) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done;
}

TEST(TimelineMergerTest, MergesEveryRankOfTheTrialAndReportsEachRequestOnce) {
  TempFolder folder;
  const std::string root = folder.path() + "/checkpoints";
  WriteRank(root, 4, 0);
  WriteRank(root, 4, 1);
  WriteRank(root, 5, 0);  // another trial's
  TimelineMerger merger;
  EXPECT_FALSE(merger.busy());
  const std::string out = folder.path() + "/timeline.json";
  merger.Merge({.trial_id = 4, .checkpoint_root = root, .out_path = out});
  EXPECT_TRUE(merger.busy());
  std::vector<TimelineMerger::Done> done = WaitForDone(merger, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status;
  EXPECT_EQ(done[0].files, 2u);
  EXPECT_EQ(done[0].request.out_path, out);
  EXPECT_FALSE(merger.busy());
  EXPECT_TRUE(merger.TakeDone().empty());
  const std::string merged = Read(out);
  EXPECT_THAT(merged, HasSubstr("\"name\":\"rank 0\""));
  EXPECT_THAT(merged, HasSubstr("\"name\":\"rank 1\""));
  EXPECT_EQ(merged.find("\"pid\":1,\"tid\":1,\"ts\":1000000"),
            merged.rfind("\"pid\":1,\"tid\":1,\"ts\":1000000"))
      << "trial 5's rank 0 was merged too:\n"
      << merged;
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

TEST(TimelineMergerTest, NoRankFileLeavesNoTimeline) {
  TempFolder folder;
  TimelineMerger merger;
  const std::string out = folder.path() + "/timeline.json";
  merger.Merge({.trial_id = 1, .checkpoint_root = folder.path() + "/none", .out_path = out});
  std::vector<TimelineMerger::Done> done = WaitForDone(merger, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].status.ok());
  EXPECT_EQ(done[0].files, 0u);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(TimelineMergerTest, AnUnwritableTimelineIsReported) {
  TempFolder folder;
  const std::string root = folder.path() + "/checkpoints";
  WriteRank(root, 1, 0);
  TimelineMerger merger;
  merger.Merge({.trial_id = 1,
                .checkpoint_root = root,
                .out_path = folder.path() + "/no/such/folder/timeline.json"});
  std::vector<TimelineMerger::Done> done = WaitForDone(merger, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].status.ok());
  EXPECT_THAT(std::string(done[0].status.message()), HasSubstr("no/such/folder"));
}

TEST(TimelineMergerTest, TheDestructorCarriesOutWhatWasAsked) {
  TempFolder folder;
  const std::string root = folder.path() + "/checkpoints";
  for (uint64_t trial = 1; trial <= 20; ++trial) WriteRank(root, trial, 0);
  {
    TimelineMerger merger;
    for (uint64_t trial = 1; trial <= 20; ++trial) {
      merger.Merge({.trial_id = trial,
                    .checkpoint_root = root,
                    .out_path = folder.path() + "/timeline-" + std::to_string(trial) + ".json"});
    }
  }
  for (uint64_t trial = 1; trial <= 20; ++trial) {
    EXPECT_TRUE(
        std::filesystem::exists(folder.path() + "/timeline-" + std::to_string(trial) + ".json"))
        << trial;
  }
}

}  // namespace
}  // namespace cohort
