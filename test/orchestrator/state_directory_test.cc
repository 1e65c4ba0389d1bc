// StateDirectory on real folders: ids continue after what an earlier orchestrator left, the
// first free task id survives, an interrupted delete is finished, experiments read back whole, and
// a folder that cannot be read is named with the reason; one orchestrator at a time holds the
// directory's lock.
#include "runtime/orchestrator/state_directory.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/orchestrator/state_directory_lock.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr char kConfig[] = R"(
entrypoint: mlp
searcher: {name: single, metric: validation_loss, max_length: {batches: 10}}
hyperparameters: {global_batch_size: 8}
)";

// An experiment folder as an orchestrator leaves it, with trials `trial_ids`.
void WriteExperiment(const StateDirectory& state, uint64_t id, std::vector<uint64_t> trial_ids,
                     RunState run_state) {
  absl::StatusOr<RunFolder> folder = RunFolder::Create(state.ExperimentPath(id));
  ASSERT_TRUE(folder.ok()) << folder.status();
  ASSERT_TRUE(WriteFileAtomically(folder->config_path(), kConfig).ok());
  ExperimentRecord record;
  record.state = run_state;
  for (uint64_t trial : trial_ids) {
    ASSERT_TRUE(folder->PrepareTrial(trial).ok());
    record.trial(trial);
  }
  ASSERT_TRUE(WriteFileAtomically(folder->experiment_json_path(), record.ToJson()).ok());
}

TEST(StateDirectoryLockTest, OneHolderAtATimeAndTheRefusalNamesIt) {
  TempFolder folder;
  const std::string root = folder.path() + "/state/nested";
  {
    absl::StatusOr<StateDirectoryLock> first = StateDirectoryLock::Acquire(root);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE(std::filesystem::is_directory(root));
    const absl::StatusOr<StateDirectoryLock> second = StateDirectoryLock::Acquire(root);
    ASSERT_FALSE(second.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
    EXPECT_THAT(second.status().message(),
                HasSubstr(absl::StrCat("the state directory ", root,
                                       " is in use by another orchestrator (pid ", ::getpid())));
    StateDirectoryLock moved = *std::move(first);  // the lock moves with it
    EXPECT_FALSE(StateDirectoryLock::Acquire(root).ok());
  }
  // Released with its holder: the next one takes it, the file left behind notwithstanding.
  EXPECT_TRUE(StateDirectoryLock::Acquire(root).ok());
}

TEST(StateDirectoryTest, AnEmptyDirectoryStartsEveryIdAtOne) {
  TempFolder root;
  const StateDirectory state(root.path());
  EXPECT_EQ(state.FirstFreeExperimentId(), 1u);
  EXPECT_EQ(state.FirstFreeTrialId(), 1u);
  EXPECT_EQ(state.FirstFreeTaskId(), 1u);
  EXPECT_TRUE(state.ReadExperiments().empty());
}

TEST(StateDirectoryTest, IdsContinueAfterEveryExperimentTrialAndTaskLeft) {
  TempFolder root;
  const StateDirectory state(root.path());
  WriteExperiment(state, 2, {3, 4}, RunState::kCompleted);
  WriteExperiment(state, 7, {9}, RunState::kActive);
  ASSERT_TRUE(state.StoreFirstFreeTaskId(41).ok());
  EXPECT_EQ(state.FirstFreeExperimentId(), 8u);
  EXPECT_EQ(state.FirstFreeTrialId(), 10u);
  EXPECT_EQ(StateDirectory(root.path()).FirstFreeTaskId(), 41u);
}

// A delete stopped between its rename and the end of its removal leaves .deleted-<id>: the next
// start removes it, and nothing else.
TEST(StateDirectoryTest, InterruptedDeletesAreFinished) {
  TempFolder root;
  const StateDirectory state(root.path());
  EXPECT_TRUE(state.FinishInterruptedDeletes().value().empty());  // no experiments folder yet
  WriteExperiment(state, 3, {5}, RunState::kCompleted);
  const std::string leftover = root / "experiments/.deleted-2";
  std::filesystem::create_directories(leftover + "/trials/4");
  std::ofstream(leftover + "/trials/4/metrics.jsonl") << "{}\n";
  absl::StatusOr<std::vector<std::string>> removed = state.FinishInterruptedDeletes();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, std::vector<std::string>{leftover});
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE(std::filesystem::exists(state.ExperimentPath(3)));
  EXPECT_EQ(state.ReadExperiments().size(), 1u);
}

TEST(StateDirectoryTest, ExperimentsReadBackInIdOrderAndABrokenOneIsNamed) {
  TempFolder root;
  const StateDirectory state(root.path());
  WriteExperiment(state, 5, {1}, RunState::kActive);
  WriteExperiment(state, 3, {}, RunState::kStopped);
  std::filesystem::create_directories(state.ExperimentPath(4));  // no config, no record
  std::vector<absl::StatusOr<StoredExperiment>> read = state.ReadExperiments();
  ASSERT_EQ(read.size(), 3u);
  ASSERT_TRUE(read[0].ok()) << read[0].status();
  EXPECT_EQ(read[0]->id, 3u);
  EXPECT_EQ(read[0]->record.state, RunState::kStopped);
  EXPECT_EQ(read[0]->config.entrypoint, "mlp");
  EXPECT_GT(read[0]->submitted_unix, 0);
  EXPECT_FALSE(read[1].ok());
  EXPECT_THAT(std::string(read[1].status().message()),
              HasSubstr("experiment 4 in " + state.ExperimentPath(4) + " is not loaded: "));
  ASSERT_TRUE(read[2].ok()) << read[2].status();
  EXPECT_EQ(read[2]->id, 5u);
  ASSERT_EQ(read[2]->record.trials.size(), 1u);
  EXPECT_EQ(read[2]->record.trials[0].id, 1u);
}

TEST(StateDirectoryTest, OnlyEndedStatesAreWrittenAsEnded) {
  EXPECT_EQ(RunStateOf(TrialState::kRunning), RunState::kActive);
  EXPECT_EQ(RunStateOf(TrialState::kPaused), RunState::kActive);
  EXPECT_EQ(RunStateOf(TrialState::kError), RunState::kError);
  EXPECT_EQ(RunStateOf(ExperimentState::kStopping), RunState::kActive);
  EXPECT_EQ(RunStateOf(ExperimentState::kCompleted), RunState::kCompleted);
}

}  // namespace
}  // namespace cohort
