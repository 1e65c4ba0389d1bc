// The shared_fs store: round trips, damage detection, refusals, Delete, LatestCheckpoint, the
// cleaning of abandoned temporary entries and the verified copy into another store. Each test
// uses a fresh root folder.
#include "runtime/checkpoint/shared_fs_storage.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/checkpoint/internal/posix_io.h"
#include "temp_folder.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

CheckpointInfo Info(const std::string& id, uint64_t trial_id, uint64_t batches) {
  CheckpointInfo info;
  info.id = id;
  info.trial_id = trial_id;
  info.batches_trained = batches;
  info.records_trained = batches * 32;
  info.config_fingerprint = "fingerprint-" + std::to_string(trial_id);
  info.abi_major = 1;
  info.abi_minor = 2;
  info.created_unix_ms = 1700000000000 + static_cast<int64_t>(batches);
  return info;
}

const std::map<std::string, std::string> kFiles = {
    {"parameters", std::string(10000, 'p') + "end"},
    {"optimizer", std::string("\0\1\2adam", 7)},
    {"sampler", ""},
};

std::vector<std::string> Ids(const std::vector<CheckpointInfo>& infos) {
  std::vector<std::string> ids;
  for (const CheckpointInfo& info : infos) ids.push_back(info.id);
  return ids;
}

class SharedFsStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenSharedFsStorage(root_.path());
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
  }

  std::vector<std::string> Listed() const {
    auto listed = storage_->List();
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? Ids(*listed) : std::vector<std::string>{};
  }

  void WriteExample(const std::string& id, uint64_t trial_id, uint64_t batches) {
    absl::Status written = storage_->Write(Info(id, trial_id, batches), kFiles);
    ASSERT_TRUE(written.ok()) << written;
  }

  TempFolder root_;
  std::unique_ptr<CheckpointStorage> storage_;
};

TEST_F(SharedFsStorageTest, RoundTripsInfoAndFiles) {
  WriteExample("trial-3-batch-100", 3, 100);
  absl::StatusOr<Checkpoint> read = storage_->Read("trial-3-batch-100");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files, kFiles);
  CheckpointInfo expected = Info("trial-3-batch-100", 3, 100);
  for (const auto& [name, bytes] : kFiles)
    expected.files.push_back({name, bytes.size(), Crc32c(bytes)});
  EXPECT_EQ(read->info, expected);

  auto listed = storage_->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front(), expected);
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre("trial-3-batch-100"));  // no temporary leftovers
  EXPECT_THAT(NamesIn(root_ / "trial-3-batch-100"),
              ElementsAre("manifest", "optimizer", "parameters", "sampler"));
}

TEST_F(SharedFsStorageTest, CheckpointWithoutFilesRoundTrips) {
  ASSERT_TRUE(storage_->Write(Info("empty", 1, 0), {}).ok());
  absl::StatusOr<Checkpoint> read = storage_->Read("empty");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->files.empty());
  EXPECT_TRUE(read->info.files.empty());
}

TEST_F(SharedFsStorageTest, ZeroCreationTimeRecordsTheTimeOfTheWrite) {
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  CheckpointInfo info = Info("stamped", 1, 1);
  info.created_unix_ms = 0;
  const int64_t before = now_ms();
  ASSERT_TRUE(storage_->Write(info, kFiles).ok());
  const int64_t after = now_ms();
  auto read = storage_->Read("stamped");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_GE(read->info.created_unix_ms, before);
  EXPECT_LE(read->info.created_unix_ms, after);
}

TEST(SharedFsStorageOpenTest, CreatesMissingRootAndDescribesIt) {
  TempFolder parent;
  const std::string root = parent / "a/b/checkpoints";
  auto storage = OpenSharedFsStorage(root);
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ((*storage)->Describe(), "shared_fs:" + root);
  struct stat info {};
  ASSERT_EQ(::stat(root.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
}

TEST(SharedFsStorageOpenTest, RefusesARootThatIsAFile) {
  TempFolder parent;
  WriteBytes(parent / "file", "not a folder");
  auto storage = OpenSharedFsStorage(parent / "file");
  EXPECT_FALSE(storage.ok());
  EXPECT_THAT(storage.status().message(), HasSubstr(parent / "file"));
  auto below = OpenSharedFsStorage(parent / "file/sub");
  EXPECT_FALSE(below.ok());
  EXPECT_THAT(below.status().message(), HasSubstr("Not a directory"));
  EXPECT_FALSE(OpenSharedFsStorage("").ok());
}

TEST_F(SharedFsStorageTest, FlippedBitIsDataLossOnReadButListedBySize) {
  WriteExample("flipped", 1, 10);
  FlipBit(root_ / "flipped/parameters", 5000);
  absl::Status read = storage_->Read("flipped").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(),
              HasSubstr("checkpoint 'flipped' file 'parameters' fails its checksum"));
  EXPECT_THAT(Listed(), ElementsAre("flipped"));  // List checks sizes only; Read catches the rest
}

TEST_F(SharedFsStorageTest, TruncatedFileIsNotListedAndIsDataLoss) {
  WriteExample("older", 1, 10);
  WriteExample("newer", 1, 20);
  ASSERT_EQ(::truncate((root_ / "newer/parameters").c_str(), 100), 0);
  EXPECT_THAT(Listed(), ElementsAre("older"));
  absl::Status read = storage_->Read("newer").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(),
              HasSubstr("file 'parameters' has 100 bytes; the manifest records 10003"));
  auto latest = LatestCheckpoint(*storage_, 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "older");
}

TEST_F(SharedFsStorageTest, MissingDataFileIsNotListedAndIsDataLoss) {
  WriteExample("gap", 1, 10);
  ASSERT_EQ(::unlink((root_ / "gap/optimizer").c_str()), 0);
  EXPECT_THAT(Listed(), IsEmpty());
  absl::Status read = storage_->Read("gap").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(), HasSubstr("file 'optimizer'"));
}

TEST_F(SharedFsStorageTest, MissingManifestIsNotListedAndIsDataLoss) {
  WriteExample("headless", 1, 10);
  ASSERT_EQ(::unlink((root_ / "headless/manifest").c_str()), 0);
  EXPECT_THAT(Listed(), IsEmpty());
  absl::Status read = storage_->Read("headless").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(), HasSubstr("has no manifest"));
}

TEST_F(SharedFsStorageTest, CorruptManifestIsNotListedAndIsDataLoss) {
  WriteExample("scrambled", 1, 10);
  WriteExample("garbage", 1, 11);
  WriteExample("fine", 1, 12);
  FlipBit(root_ / "scrambled/manifest", 20);
  WriteBytes(root_ / "garbage/manifest", "definitely not a FlatBuffer");
  EXPECT_THAT(Listed(), ElementsAre("fine"));
  EXPECT_EQ(storage_->Read("scrambled").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(storage_->Read("garbage").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SharedFsStorageTest, FolderRenamedByHandIsNotListed) {
  WriteExample("original", 1, 10);
  ASSERT_EQ(::rename((root_ / "original").c_str(), (root_ / "copy").c_str()), 0);
  EXPECT_THAT(Listed(), IsEmpty());
  EXPECT_THAT(storage_->Read("copy").status().message(),
              HasSubstr("holds the manifest of 'original'"));
}

TEST_F(SharedFsStorageTest, StrangersInTheRootAreIgnored) {
  WriteExample("real", 1, 10);
  WriteBytes(root_ / "notes.txt", "hello");
  ASSERT_EQ(::mkdir((root_ / "empty-folder").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ / ".hidden").c_str(), 0755), 0);
  EXPECT_THAT(Listed(), ElementsAre("real"));
}

TEST_F(SharedFsStorageTest, ListDamagedNamesWhatListLeavesOutAndWhy) {
  WriteExample("whole", 1, 10);
  WriteExample("truncated", 1, 20);
  WriteExample("scrambled", 1, 30);
  WriteExample("headless", 1, 40);
  ASSERT_EQ(::truncate((root_ / "truncated/parameters").c_str(), 100), 0);
  WriteBytes(root_ / "scrambled/manifest", "definitely not a FlatBuffer");
  ASSERT_EQ(::unlink((root_ / "headless/manifest").c_str()), 0);
  WriteBytes(root_ / "notes.txt", "a file, not a checkpoint folder");
  ASSERT_EQ(::mkdir((root_ / ".timelines").c_str(), 0755), 0);
  auto damaged = storage_->ListDamaged();
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  ASSERT_EQ(damaged->size(), 3u);
  EXPECT_EQ((*damaged)[0].id, "headless");
  EXPECT_FALSE((*damaged)[0].info.has_value());
  EXPECT_THAT((*damaged)[0].problem, HasSubstr("has no manifest"));
  EXPECT_EQ((*damaged)[1].id, "scrambled");
  EXPECT_FALSE((*damaged)[1].info.has_value());
  EXPECT_EQ((*damaged)[2].id, "truncated");
  ASSERT_TRUE((*damaged)[2].info.has_value());
  EXPECT_EQ((*damaged)[2].info->batches_trained, 20u);
  EXPECT_THAT((*damaged)[2].problem,
              HasSubstr("file 'parameters' is missing or not of its recorded size"));
  EXPECT_THAT(Listed(), ElementsAre("whole"));
}

TEST_F(SharedFsStorageTest, WritingAnExistingIdIsAlreadyExistsAndKeepsTheOriginal) {
  WriteExample("once", 1, 10);
  absl::Status again = storage_->Write(Info("once", 1, 99), {{"parameters", "other"}});
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), HasSubstr("checkpoint 'once' already exists in shared_fs:"));
  auto read = storage_->Read("once");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->info.batches_trained, 10u);
  EXPECT_EQ(read->files, kFiles);
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre("once"));
}

TEST_F(SharedFsStorageTest, DamagedFolderInTheWayIsReportedNotOverwritten) {
  ASSERT_EQ(::mkdir((root_ / "debris").c_str(), 0755), 0);
  WriteBytes(root_ / "debris/parameters", "half");
  absl::Status blocked = storage_->Write(Info("debris", 1, 10), kFiles);
  EXPECT_EQ(blocked.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(blocked.message(), HasSubstr("not whole"));
  EXPECT_EQ(ReadBytes(root_ / "debris/parameters"), "half");

  ASSERT_TRUE(storage_->Delete("debris").ok());
  WriteExample("debris", 1, 10);
  EXPECT_THAT(Listed(), ElementsAre("debris"));
}

TEST_F(SharedFsStorageTest, BadIdsAndFileNamesAreRefusedBeforeAnythingIsWritten) {
  const std::vector<std::string> bad_ids = {"",    ".partial-x", "../escape",
                                            "a/b", "with space", std::string(201, 'i')};
  for (const std::string& id : bad_ids) {
    EXPECT_EQ(storage_->Write(Info(id, 1, 1), kFiles).code(), absl::StatusCode::kInvalidArgument)
        << id;
    EXPECT_EQ(storage_->Read(id).status().code(), absl::StatusCode::kInvalidArgument) << id;
    EXPECT_EQ(storage_->Delete(id).code(), absl::StatusCode::kInvalidArgument) << id;
  }
  for (const char* name : {"manifest", ".hidden", "dir/file", "", "tab\t"}) {
    absl::Status refused =
        storage_->Write(Info("good-id", 1, 1), {{"parameters", "x"}, {name, "y"}});
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(refused.message(), HasSubstr("checkpoint file name"));
  }
  EXPECT_THAT(NamesIn(root_.path()), IsEmpty());
}

TEST_F(SharedFsStorageTest, DeleteRemovesEverythingAndThenReportsNotFound) {
  WriteExample("keep", 1, 10);
  WriteExample("drop", 1, 20);
  ASSERT_TRUE(storage_->Delete("drop").ok());
  EXPECT_THAT(Listed(), ElementsAre("keep"));
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre("keep"));
  EXPECT_EQ(storage_->Read("drop").status().code(), absl::StatusCode::kNotFound);
  absl::Status again = storage_->Delete("drop");
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(again.message(), "no checkpoint 'drop' in shared_fs:" + root_.path());
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre("keep"));
}

TEST_F(SharedFsStorageTest, ReadOfAnAbsentIdIsNotFound) {
  absl::Status read = storage_->Read("never-written").status();
  EXPECT_EQ(read.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(read.message(), "no checkpoint 'never-written' in shared_fs:" + root_.path());
}

TEST_F(SharedFsStorageTest, ListSortsByTrialThenBatches) {
  WriteExample("t2-b5", 2, 5);
  WriteExample("t1-b30", 1, 30);
  WriteExample("t1-b4", 1, 4);
  WriteExample("t2-b1", 2, 1);
  EXPECT_THAT(Listed(), ElementsAre("t1-b4", "t1-b30", "t2-b1", "t2-b5"));
}

TEST_F(SharedFsStorageTest, LatestCheckpointIsTheTrialsMostTrained) {
  WriteExample("t1-b100", 1, 100);
  WriteExample("t1-b300", 1, 300);
  WriteExample("t1-b200", 1, 200);
  WriteExample("t2-b900", 2, 900);
  auto latest = LatestCheckpoint(*storage_, 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "t1-b300");
  EXPECT_EQ(latest->files.size(), kFiles.size());
  absl::Status none = LatestCheckpoint(*storage_, 3).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.message(), "trial 3 has no checkpoint in shared_fs:" + root_.path());
}

TEST_F(SharedFsStorageTest, LatestCheckpointBreaksBatchTiesByCreationTime) {
  CheckpointInfo first = Info("z-first", 1, 50);
  CheckpointInfo second = Info("a-second", 1, 50);
  second.created_unix_ms = first.created_unix_ms + 1;
  ASSERT_TRUE(storage_->Write(first, kFiles).ok());
  ASSERT_TRUE(storage_->Write(second, kFiles).ok());
  auto latest = LatestCheckpoint(*storage_, 1);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->id, "a-second");
}

TEST_F(SharedFsStorageTest, CleanTemporaryRemovesAbandonedEntriesOnly) {
  WriteExample("real", 1, 10);
  // What a crashed writer leaves: a staging folder with its (now unlocked) lock file, a lock
  // file whose folder was already renamed, and a folder whose lock file is gone.
  ASSERT_EQ(::mkdir((root_ / ".partial-real2-00000000000000aa").c_str(), 0755), 0);
  WriteBytes(root_ / ".partial-real2-00000000000000aa/parameters", "partial");
  WriteBytes(root_ / ".partial-real2-00000000000000aa.lock", "");
  WriteBytes(root_ / ".partial-real3-00000000000000bb.lock", "");
  ASSERT_EQ(::mkdir((root_ / ".partial-real4-00000000000000cc").c_str(), 0755), 0);
  WriteBytes(root_ / ".unrelated", "kept");
  ASSERT_TRUE(storage_->CleanTemporary().ok());
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre(".unrelated", "real"));
  EXPECT_THAT(Listed(), ElementsAre("real"));
}

TEST_F(SharedFsStorageTest, OpeningCleansAbandonedEntries) {
  ASSERT_EQ(::mkdir((root_ / ".partial-x-0000000000000001").c_str(), 0755), 0);
  WriteBytes(root_ / ".partial-x-0000000000000001/parameters", "partial");
  auto reopened = OpenSharedFsStorage(root_.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_THAT(NamesIn(root_.path()), IsEmpty());
}

// A query's view of a store others write: what it lists, and nothing created or removed.
TEST_F(SharedFsStorageTest, OpeningToReadChangesNothing) {
  WriteExample("real", 1, 10);
  ASSERT_EQ(::mkdir((root_ / ".partial-x-0000000000000001").c_str(), 0755), 0);
  auto reader = OpenSharedFsStorageToRead(root_.path());
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT(NamesIn(root_.path()), ElementsAre(".partial-x-0000000000000001", "real"));
  auto listed = (*reader)->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_THAT(*listed, SizeIs(1));
  EXPECT_EQ((*listed)[0].id, "real");
  const std::string missing = root_ / "not-there";
  EXPECT_TRUE(absl::IsNotFound(OpenSharedFsStorageToRead(missing).status()));
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// CopySharedFsCheckpoint, the copy of `cohort checkpoint export`: files larger than one piece go
// through whole and verified, the copy is the same checkpoint in its new store, and a damaged
// source leaves nothing behind.
class SharedFsCopyTest : public SharedFsStorageTest {
 protected:
  // Files of several copy pieces, one of them not a multiple of a piece, and an empty one.
  const std::map<std::string, std::string> large_ = {
      {"parameters", std::string(2 * checkpoint_internal::kCopyPieceBytes + 12345, 'w')},
      {"optimizer", std::string(checkpoint_internal::kCopyPieceBytes, 'm') + "tail"},
      {"empty", ""}};
  TempFolder destination_;
};

TEST_F(SharedFsCopyTest, ACopyIsTheSameCheckpointWholeInItsNewStore) {
  ASSERT_TRUE(storage_->Write(Info("big", 3, 40), large_).ok());
  absl::Status copied = CopySharedFsCheckpoint(root_.path(), "big", destination_.path());
  ASSERT_TRUE(copied.ok()) << copied;
  auto copy_store = OpenSharedFsStorage(destination_.path());
  ASSERT_TRUE(copy_store.ok());
  absl::StatusOr<Checkpoint> copy = (*copy_store)->Read("big");
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<Checkpoint> original = storage_->Read("big");
  ASSERT_TRUE(original.ok());
  EXPECT_EQ(copy->files, large_);
  EXPECT_EQ(copy->info.created_unix_ms, original->info.created_unix_ms);
  EXPECT_EQ(copy->info.config_fingerprint, original->info.config_fingerprint);
  // Once there, a second copy is refused and the first kept.
  absl::Status again = CopySharedFsCheckpoint(root_.path(), "big", destination_.path());
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_TRUE((*copy_store)->Read("big").ok());
}

TEST_F(SharedFsCopyTest, ADamagedSourceIsDataLossAndLeavesNothingBehind) {
  ASSERT_TRUE(storage_->Write(Info("flipped", 3, 40), large_).ok());
  FlipBit(root_ / "flipped/parameters", checkpoint_internal::kCopyPieceBytes + 7);
  absl::Status copied = CopySharedFsCheckpoint(root_.path(), "flipped", destination_.path());
  EXPECT_EQ(copied.code(), absl::StatusCode::kDataLoss) << copied;
  EXPECT_THAT(copied.message(),
              HasSubstr("checkpoint 'flipped' file 'parameters' fails its checksum"));
  ASSERT_TRUE(storage_->Write(Info("cut", 3, 50), large_).ok());
  ASSERT_EQ(::truncate((root_ / "cut/optimizer").c_str(), 100), 0);
  copied = CopySharedFsCheckpoint(root_.path(), "cut", destination_.path());
  EXPECT_EQ(copied.code(), absl::StatusCode::kDataLoss) << copied;
  EXPECT_THAT(copied.message(), HasSubstr("file 'optimizer' has 100 bytes"));
  // Neither a checkpoint nor a temporary entry is left in the destination.
  absl::StatusOr<std::vector<std::string>> left =
      checkpoint_internal::ListFolder(destination_.path());
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(*left, IsEmpty());
  EXPECT_EQ(CopySharedFsCheckpoint(root_.path(), "absent", destination_.path()).code(),
            absl::StatusCode::kNotFound);
}

// The source is only read: a store that is not there is not made (an export from a machine
// without the shared storage made its folders there), and neither is the destination.
TEST_F(SharedFsCopyTest, AMissingSourceIsNotFoundAndMadeNowhere) {
  const std::filesystem::path missing = root_ / "experiment-12";
  const std::filesystem::path into = std::filesystem::path(destination_.path()) / "out";
  EXPECT_EQ(CopySharedFsCheckpoint(missing.string(), "big", into.string()).code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_FALSE(std::filesystem::exists(into));
}

}  // namespace
}  // namespace cohort
