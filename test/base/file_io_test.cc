// ReadWholeFile: every byte of a file, NOT_FOUND naming a missing one, FAILED_PRECONDITION for a
// folder. WriteWholeFile: replaces a file's bytes, and names a path it cannot write.
#include "runtime/base/file_io.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TEST(ReadWholeFileTest, ReadsEveryByteOfAFileLargerThanOneChunk) {
  TempFolder folder;
  const std::string path = folder.path() + "/bytes";
  std::string written;
  for (int i = 0; i < 200000; ++i) written.push_back(static_cast<char>(i * 7));
  written[5] = '\0';
  std::ofstream(path, std::ios::binary) << written;
  absl::StatusOr<std::string> read = ReadWholeFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, written);

  std::ofstream(path, std::ios::binary | std::ios::trunc).close();
  read = ReadWholeFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "");
}

TEST(ReadWholeFileTest, AMissingFileIsNotFoundAndAFolderIsNoRegularFile) {
  TempFolder folder;
  absl::StatusOr<std::string> missing = ReadWholeFile(folder.path() + "/missing");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("open " + folder.path() + "/missing"));
  absl::StatusOr<std::string> directory = ReadWholeFile(folder.path());
  EXPECT_TRUE(absl::IsFailedPrecondition(directory.status())) << directory.status();
  EXPECT_THAT(std::string(directory.status().message()), HasSubstr("is not a regular file"));
}

TEST(WriteWholeFileTest, ReplacesTheFilesBytesAndNamesAPathItCannotWrite) {
  TempFolder folder;
  const std::string path = folder / "config.yaml";
  ASSERT_TRUE(WriteWholeFile(path, "a much longer first version\n").ok());
  ASSERT_TRUE(WriteWholeFile(path, std::string("short\0bytes", 11)).ok());
  EXPECT_EQ(ReadWholeFile(path).value_or("unreadable"), std::string("short\0bytes", 11));
  const absl::Status missing = WriteWholeFile(folder / "no/such/folder/file", "x");
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.message()), HasSubstr("no/such/folder/file"));
}

}  // namespace
}  // namespace cohort
