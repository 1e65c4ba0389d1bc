// Every input has a bound: a config's bytes (file and --set), its YAML nodes once aliases are
// expanded, its nesting, and the file itself (no pipes or devices), each refused naming the bound.
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"
#include "test/common/temp_folder.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

constexpr char kBoundedValid[] = R"(name: bounded
entrypoint: mlp
searcher: {name: single, metric: loss, max_length: {batches: 10}}
hyperparameters:
  global_batch_size: 4
)";

// About 500 bytes of YAML whose aliases expand to 9^9 (387 million) strings.
std::string AliasBomb() {
  std::string text =
      absl::StrCat(kBoundedValid, "  bomb:\n    a: &a [x, x, x, x, x, x, x, x, x]\n");
  char previous = 'a';
  for (char name = 'b'; name <= 'i'; ++name) {
    absl::StrAppend(&text, "    ", std::string(1, name), ": &", std::string(1, name), " [");
    for (int i = 0; i < 9; ++i)
      absl::StrAppend(&text, i ? ", " : "", "*", std::string(1, previous));
    absl::StrAppend(&text, "]\n");
    previous = name;
  }
  return text;
}

std::string Nested(int depth) {
  return absl::StrCat(kBoundedValid, "  deep: ", std::string(depth, '['), std::string(depth, ']'),
                      "\n");
}

TEST(ConfigBoundsTest, AnAliasBombIsRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(AliasBomb());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("more than 100000 YAML nodes once its aliases are expanded"));
}

TEST(ConfigBoundsTest, NestingHasABound) {
  EXPECT_TRUE(ParseExperimentConfig(Nested(kMaxConfigDepth - 4)).ok());
  for (int depth : {int(kMaxConfigDepth) + 1, 5000}) {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(Nested(depth));
    ASSERT_FALSE(config.ok()) << depth;
    EXPECT_THAT(config.status().message(), HasSubstr("nests deeper than 64 levels")) << depth;
  }
}

// An alias inside its own anchor makes the nodes a cycle: refused by the nesting bound, whether
// the cycle is the whole document (not a map: the error quoting it used to recurse until the
// stack overflowed, found by the config fuzzer) or a value in it.
TEST(ConfigBoundsTest, AnAliasInsideItsOwnAnchorIsRefused) {
  for (const std::string& text :
       {std::string("&c [*c, *c]\n"), std::string("   &c [,*c,*c,*c]\n  trial: 1\n"),
        absl::StrCat(kBoundedValid, "  loop: &l [*l]\n")}) {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(text);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << config.status();
    EXPECT_THAT(config.status().message(), HasSubstr("nests deeper than 64 levels")) << text;
  }
}

TEST(ConfigBoundsTest, BytesHaveABoundWithAndWithoutOverrides) {
  const std::string padding(kMaxConfigBytes, '#');
  absl::StatusOr<ExperimentConfig> big =
      ParseExperimentConfig(absl::StrCat(kBoundedValid, padding));
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("Cohort reads at most 1048576"));

  absl::StatusOr<ExperimentConfig> grown = ParseExperimentConfig(
      kBoundedValid, {absl::StrCat("description=", std::string(kMaxConfigBytes, 'x'))});
  ASSERT_FALSE(grown.ok());
  EXPECT_THAT(grown.status().message(), HasSubstr("with --set applied; Cohort reads at most"));
}

TEST(ConfigBoundsTest, AValueWithANulIsRefusedNamingItsLine) {
  absl::StatusOr<ExperimentConfig> config =
      ParseExperimentConfig(absl::StrCat(kBoundedValid, "  tag: \"a\\0b\"\n"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("line 6: a value holds a NUL character"));
  EXPECT_FALSE(ParseExperimentConfig(kBoundedValid, {"name=\"x\\0y\""}).ok());
}

TEST(ConfigBoundsTest, OnlyRegularFilesOfBoundedSizeAreRead) {
  TempFolder folder;
  const std::string fifo = folder / "pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(LoadExperimentConfig(fifo).status().message(), HasSubstr("not a regular file"));
  EXPECT_THAT(LoadExperimentConfig("/dev/zero").status().message(),
              HasSubstr("not a regular file"));

  const std::string large = folder / "large.yaml";
  std::ofstream(large) << kBoundedValid << std::string(2 * kMaxConfigBytes, '#');
  EXPECT_THAT(LoadExperimentConfig(large).status().message(),
              HasSubstr("larger than 1048576 bytes"));
  const std::string fine = folder / "fine.yaml";
  std::ofstream(fine) << kBoundedValid;
  EXPECT_TRUE(LoadExperimentConfig(fine).ok());
}

}  // namespace
}  // namespace cohort
