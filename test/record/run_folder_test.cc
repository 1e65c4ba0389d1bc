// DefaultRunPath keeps every run folder inside its parent, whatever the experiment's name.
#include "runtime/record/run_folder.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::StartsWith;

TEST(DefaultRunPathTest, ANameIsOnePathComponentInsideTheParent) {
  TempFolder parent;
  for (const auto& [name, start] : {std::pair{"mnist", "mnist-"},
                                    {"../evil", "_evil-"},
                                    {"/etc/passwd", "_etc_passwd-"},
                                    {"..", "experiment-"},
                                    {"a b\tc\n", "a_b_c_-"},
                                    {"", "experiment-"}}) {
    const std::string path = DefaultRunPath(parent.path(), name);
    EXPECT_EQ(std::filesystem::path(path).parent_path().string(), parent.path()) << name;
    EXPECT_THAT(std::filesystem::path(path).filename().string(), StartsWith(start)) << name;
  }
}

}  // namespace
}  // namespace cohort
