// RankTimelinePath / TrialTimelinePaths: each rank's timeline has its own file in the
// ".timelines" folder of the checkpoint storage, and a trial's files are found without another
// trial's (trial 1 is not a prefix match for trial 10).
#include "runtime/observe/timeline_files.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(TimelineFilesTest, EachTrialFindsItsOwnRanksAndAttempts) {
  TempFolder folder;
  const std::string root = folder.path() + "/experiment-3";
  EXPECT_THAT(TrialTimelinePaths(root, 1), IsEmpty());  // no folder yet
  const absl::StatusOr<std::string> first = RankTimelinePath(root, 1, 0, 1, 1000);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, root + "/.timelines/trial1-attempt0-rank1-1000.json");
  // An orchestrator restarted numbers attempts from 0 again: the start time keeps them apart.
  const std::string again = *RankTimelinePath(root, 1, 0, 1, 2000);
  const std::string other = *RankTimelinePath(root, 10, 0, 0, 1000);
  for (const std::string& path : {*first, again, other}) std::ofstream(path) << "[\n";
  EXPECT_THAT(TrialTimelinePaths(root, 1), ElementsAre(*first, again));
  EXPECT_THAT(TrialTimelinePaths(root, 10), ElementsAre(other));
}

TEST(TimelineFilesTest, AnUncreatableFolderIsAnError) {
  TempFolder folder;
  std::ofstream(folder.path() + "/file") << "x";
  const absl::StatusOr<std::string> path = RankTimelinePath(folder.path() + "/file", 1, 0, 0, 1);
  EXPECT_TRUE(absl::IsUnavailable(path.status())) << path.status();
  EXPECT_THAT(std::string(path.status().message()), ::testing::HasSubstr("/file/.timelines"));
}

}  // namespace
}  // namespace cohort
