// PruneEndedTaskFolders: the folders of the newest ended tasks stay and older ones go; a running
// task's folder, one holding checkpoints and entries that are not task folders are left alone.
#include "runtime/agent/task_folders.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class TaskFoldersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cohort-task-folders-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A task folder as TaskRun leaves it: config.yaml and log.txt.
  void AddTask(const std::string& name) {
    const fs::path folder = fs::path(dir_) / "tasks" / name;
    fs::create_directories(folder);
    std::ofstream(folder / "config.yaml") << "name: t\n";
    std::ofstream(folder / "log.txt") << "[rank 0] trained\n";
  }

  std::vector<std::string> Left() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(dir_) / "tasks")) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  std::string dir_;
};

TEST_F(TaskFoldersTest, KeepsTheNewestEndedTasksAndEveryRunningOne) {
  for (const char* id : {"1", "2", "3", "9", "10", "11"}) AddTask(id);
  const PrunedTaskFolders pruned = PruneEndedTaskFolders(dir_, /*running=*/{2, 10}, /*keep=*/2);
  EXPECT_THAT(pruned.problems, IsEmpty());
  // Ended: 1, 3, 9, 11; the newest two (9 and 11) stay. By id, not by name: 9 is older than 11.
  EXPECT_THAT(pruned.removed, ElementsAre(1, 3));
  EXPECT_THAT(Left(), UnorderedElementsAre("2", "9", "10", "11"));

  // Nothing more to remove until more tasks end.
  EXPECT_THAT(PruneEndedTaskFolders(dir_, {2, 10}, 2).removed, IsEmpty());
  EXPECT_THAT(PruneEndedTaskFolders(dir_, {}, 2).removed, ElementsAre(2, 9));
  EXPECT_THAT(PruneEndedTaskFolders(dir_, {}, 0).removed, ElementsAre(10, 11));
  EXPECT_THAT(Left(), IsEmpty());
}

TEST_F(TaskFoldersTest, LeavesCheckpointsAndWhatIsNotATaskFolderAlone) {
  for (const char* id : {"1", "2", "3"}) AddTask(id);
  fs::create_directories(fs::path(dir_) / "tasks" / "1" / "checkpoints" / "trial-1-batch-10");
  AddTask("notes");
  AddTask("007");  // not how a task id is written
  std::ofstream(fs::path(dir_) / "tasks" / "4") << "a file, not a folder\n";
  const PrunedTaskFolders pruned = PruneEndedTaskFolders(dir_, {}, 0);
  EXPECT_THAT(pruned.problems, IsEmpty());
  EXPECT_THAT(pruned.removed, ElementsAre(2, 3));
  EXPECT_THAT(Left(), UnorderedElementsAre("1", "notes", "007", "4"));
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "tasks" / "1" / "checkpoints" / "trial-1-batch-10"));
}

TEST_F(TaskFoldersTest, AWorkDirWithoutTasksHasNothingToRemove) {
  const PrunedTaskFolders pruned = PruneEndedTaskFolders(dir_ + "/never-made", {}, 0);
  EXPECT_THAT(pruned.removed, IsEmpty());
  EXPECT_THAT(pruned.problems, IsEmpty());
}

}  // namespace
}  // namespace cohort
