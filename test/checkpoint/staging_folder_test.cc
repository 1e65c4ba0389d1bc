// Staging folders: claimed under a held lock, discarded without a trace, and removed by a cleaner
// only once nobody holds them.
#include "runtime/checkpoint/internal/staging_folder.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "temp_folder.h"

namespace cohort::checkpoint_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

TEST(StagingFolderTest, ClaimCreatesALockFileNamedAfterTheId) {
  TempFolder root;
  auto staging = StagingFolder::Claim(root.path(), "trial-1");
  ASSERT_TRUE(staging.ok()) << staging.status();
  EXPECT_THAT((*staging)->path(), MatchesRegex(".*/\\.partial-trial-1-[0-9a-f]{16}"));
  EXPECT_THAT(NamesIn(root.path()),
              ElementsAre(MatchesRegex("\\.partial-trial-1-[0-9a-f]{16}\\.lock")));
}

TEST(StagingFolderTest, DiscardRemovesTheFolderAndTheLock) {
  TempFolder root;
  auto staging = StagingFolder::Claim(root.path(), "x");
  ASSERT_TRUE(staging.ok()) << staging.status();
  ASSERT_EQ(::mkdir((*staging)->path().c_str(), 0755), 0);
  WriteBytes((*staging)->path() + "/data", "bytes");
  ASSERT_TRUE((*staging)->Discard().ok());
  EXPECT_THAT(NamesIn(root.path()), IsEmpty());
  EXPECT_TRUE((*staging)->Discard().ok());  // idempotent
}

TEST(StagingFolderTest, DestructionDiscards) {
  TempFolder root;
  {
    auto staging = StagingFolder::Claim(root.path(), "x");
    ASSERT_TRUE(staging.ok()) << staging.status();
    ASSERT_EQ(::mkdir((*staging)->path().c_str(), 0755), 0);
  }
  EXPECT_THAT(NamesIn(root.path()), IsEmpty());
}

TEST(StagingFolderTest, ClaimsNeverCollide) {
  TempFolder root;
  auto a = StagingFolder::Claim(root.path(), "same");
  auto b = StagingFolder::Claim(root.path(), "same");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->path(), (*b)->path());
}

TEST(StagingFolderTest, CleanerSparesHeldClaimsEvenInTheSameProcess) {
  TempFolder root;
  auto staging = StagingFolder::Claim(root.path(), "busy");
  ASSERT_TRUE(staging.ok()) << staging.status();
  ASSERT_EQ(::mkdir((*staging)->path().c_str(), 0755), 0);
  WriteBytes((*staging)->path() + "/parameters", "in progress");
  ASSERT_TRUE(RemoveAbandonedStagingFolders(root.path()).ok());
  EXPECT_EQ(ReadBytes((*staging)->path() + "/parameters"), "in progress");
  EXPECT_EQ(NamesIn(root.path()).size(), 2u);

  (*staging).reset();  // the owner goes away without finishing: its destructor discards
  EXPECT_THAT(NamesIn(root.path()), IsEmpty());
}

TEST(StagingFolderTest, CleanerRemovesUnlockedAndLocklessEntries) {
  TempFolder root;
  ASSERT_EQ(::mkdir((root / ".partial-a-0000000000000001").c_str(), 0755), 0);
  WriteBytes(root / ".partial-a-0000000000000001/f", "x");
  WriteBytes(root / ".partial-a-0000000000000001.lock", "");
  WriteBytes(root / ".partial-b-0000000000000002.lock", "");
  ASSERT_EQ(::mkdir((root / ".partial-c-0000000000000003").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root / "checkpoint").c_str(), 0755), 0);
  WriteBytes(root / ".partial", "not a staging name");
  ASSERT_TRUE(RemoveAbandonedStagingFolders(root.path()).ok());
  EXPECT_THAT(NamesIn(root.path()), ElementsAre(".partial", "checkpoint"));
}

TEST(StagingFolderTest, FolderRenamedAwayLeavesOnlyTheLockToDiscard) {
  TempFolder root;
  auto staging = StagingFolder::Claim(root.path(), "done");
  ASSERT_TRUE(staging.ok()) << staging.status();
  ASSERT_EQ(::mkdir((*staging)->path().c_str(), 0755), 0);
  ASSERT_EQ(::rename((*staging)->path().c_str(), (root / "done").c_str()), 0);
  ASSERT_TRUE((*staging)->Discard().ok());
  EXPECT_THAT(NamesIn(root.path()), ElementsAre("done"));
}

TEST(StagingFolderTest, ClaimInAMissingRootNamesThePath) {
  TempFolder root;
  auto staging = StagingFolder::Claim(root / "missing", "x");
  EXPECT_EQ(staging.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(staging.status().message()),
              MatchesRegex(
                  "create .*/missing/\\.partial-x-[0-9a-f]{16}\\.lock: No such file or directory"));
}

}  // namespace
}  // namespace cohort::checkpoint_internal
