// A run's claim of its folder in shared checkpoint storage: the first run claims it, the same run
// may claim it again (a retried start, a resume), another run of the same folder name is refused
// naming the first, a folder that holds anything unclaimed is refused naming what it holds, and
// so is one its own run folder claimed when an earlier run there left checkpoints in it.
#include "runtime/checkpoint/root_claim.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/file_io.h"
#include "temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TEST(RootClaimTest, TheFirstRunClaimsItsFolderAndAnotherOfTheSameNameIsRefused) {
  TempFolder store;
  const std::string root = store / "hp";
  EXPECT_TRUE(CheckCheckpointRootFree(root, "/runs/hp").ok()) << "a folder not made yet is free";
  ASSERT_TRUE(ClaimCheckpointRoot(root, "/runs/./hp/", /*allow_claimed=*/false).ok());
  EXPECT_EQ(ReadWholeFile(root + "/" + kCheckpointRootMarker).value_or(""), "/runs/hp\n");

  EXPECT_TRUE(CheckCheckpointRootFree(root, "/runs/hp").ok()) << "its own claim";
  EXPECT_TRUE(ClaimCheckpointRoot(root, "/runs/hp", /*allow_claimed=*/false).ok());
  const absl::Status other = CheckCheckpointRootFree(root, "/other/hp");
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  EXPECT_THAT(other.message(), HasSubstr("which holds those of the run in /runs/hp"));
  EXPECT_TRUE(
      absl::IsFailedPrecondition(ClaimCheckpointRoot(root, "/other/hp", /*allow_claimed=*/false)));
  // A resume keeps the claim as it is (its run folder may have moved).
  EXPECT_TRUE(ClaimCheckpointRoot(root, "/moved/hp", /*allow_claimed=*/true).ok());
  EXPECT_EQ(ReadWholeFile(root + "/" + kCheckpointRootMarker).value_or(""), "/runs/hp\n");
}

TEST(RootClaimTest, AnUnclaimedFolderThatHoldsAnythingIsRefused) {
  TempFolder store;
  const std::string root = store / "hp";
  EXPECT_TRUE(CheckCheckpointRootFree(store.path(), "/runs/x").ok()) << "an empty folder is free";
  WriteBytes(store / "notes.txt", "someone's");
  const absl::Status held = CheckCheckpointRootFree(store.path(), "/runs/x");
  EXPECT_TRUE(absl::IsFailedPrecondition(held)) << held;
  EXPECT_THAT(held.message(), HasSubstr("which already holds 1 entry (notes.txt)"));
}

// runs/hp trained, was removed, and a new run is started in runs/hp: the marker names the same
// folder, but the checkpoints are the earlier run's, and the new run would resume from them.
TEST(RootClaimTest, AnEarlierRunsCheckpointsUnderTheSameFoldersClaimAreRefused) {
  TempFolder store;
  const std::string root = store / "hp";
  ASSERT_TRUE(ClaimCheckpointRoot(root, "/runs/hp", /*allow_claimed=*/false).ok());
  EXPECT_TRUE(CheckCheckpointRootFree(root, "/runs/hp").ok()) << "the claim alone";
  std::filesystem::create_directories(root + "/trial-1-batch-200");
  WriteBytes(root + "/trial-1-batch-200/metadata.json", "{}");
  const absl::Status held = CheckCheckpointRootFree(root, "/runs/hp");
  EXPECT_TRUE(absl::IsFailedPrecondition(held)) << held;
  EXPECT_THAT(held.message(),
              HasSubstr("which holds 1 entry (trial-1-batch-200) of an earlier run in /runs/hp, "
                        "whose folder has since been removed: remove them too (rm -r " +
                        root + ")"));
}

}  // namespace
}  // namespace cohort
