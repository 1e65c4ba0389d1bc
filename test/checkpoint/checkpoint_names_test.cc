// Which checkpoint ids and file names a store accepts, and what the refusals say.
#include "runtime/checkpoint/checkpoint_names.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(CheckpointNamesTest, AcceptsThePortableAlphabet) {
  for (const char* name : {"a", "trial-7-batch-1200", "v1.2_final", "0", "A.b-C_d"}) {
    EXPECT_TRUE(ValidateCheckpointId(name).ok()) << name;
    EXPECT_TRUE(ValidateCheckpointFileName(name).ok()) << name;
  }
  EXPECT_TRUE(ValidateCheckpointId(std::string(kMaxCheckpointNameLength, 'x')).ok());
  EXPECT_TRUE(ValidateCheckpointId("manifest").ok());  // reserved only among file names
}

TEST(CheckpointNamesTest, RefusesPathsHiddenNamesAndOddCharacters) {
  const std::vector<std::string> refused = {"",
                                            ".",
                                            "..",
                                            ".hidden",
                                            "a/b",
                                            "../etc",
                                            "a b",
                                            "caf\xC3\xA9",
                                            std::string("nul\0byte", 8),
                                            std::string(kMaxCheckpointNameLength + 1, 'x')};
  for (const std::string& name : refused) {
    EXPECT_EQ(ValidateCheckpointId(name).code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(ValidateCheckpointFileName(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
}

TEST(CheckpointNamesTest, MessagesSayWhy) {
  EXPECT_EQ(ValidateCheckpointId("").message(), "checkpoint id '' is empty");
  EXPECT_EQ(ValidateCheckpointId(".tmp").message(), "checkpoint id '.tmp' starts with '.'");
  EXPECT_EQ(ValidateCheckpointId("a/b").message(),
            "checkpoint id 'a/b' has a character outside [A-Za-z0-9._-]");
  EXPECT_EQ(ValidateCheckpointId("a\nb").message(),
            "checkpoint id 'a\\nb' has a character outside [A-Za-z0-9._-]");
  EXPECT_EQ(ValidateCheckpointFileName("manifest").message(),
            "checkpoint file name 'manifest' is reserved for the manifest");
  EXPECT_EQ(ValidateCheckpointFileName(std::string(201, 'y')).message(),
            "checkpoint file name '" + std::string(201, 'y') + "' is longer than 200 characters");
}

}  // namespace
}  // namespace cohort
