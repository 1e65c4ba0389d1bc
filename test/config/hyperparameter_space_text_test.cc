// DescribeSpace: a hyperparameter's search space as a YAML flow writes it, the text a refused
// resume shows for the space before and now. Each value keeps its type (16, "16" and 16.0 are
// three values), an int range's bounds show no fraction, a double's always one.
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

std::string Described(absl::string_view hyperparameter) {
  const absl::StatusOr<ExperimentConfig> config =
      ParseExperimentConfig(absl::StrCat(R"(
entrypoint: mlp
searcher: {name: grid, metric: loss, max_length: {batches: 4}}
hyperparameters:
  global_batch_size: 4
  x: )",
                                         hyperparameter, "\n"));
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return "";
  const auto space = config->hyperparameter_spaces.find("x");
  return space == config->hyperparameter_spaces.end() ? "absent" : DescribeSpace(space->second);
}

TEST(HyperparameterSpaceTextTest, WritesEachKindAsAFlow) {
  EXPECT_EQ(Described("{type: int, minval: 8, maxval: 64, count: 4}"),
            "{type: int, minval: 8, maxval: 64, count: 4}");
  EXPECT_EQ(Described("{type: double, minval: 1, maxval: 2.5, count: 3}"),
            "{type: double, minval: 1.0, maxval: 2.5, count: 3}");
  EXPECT_EQ(Described("{type: log, minval: -4, maxval: -1, base: 2, count: 2}"),
            "{type: log, minval: -4.0, maxval: -1.0, base: 2.0, count: 2}");
  EXPECT_EQ(Described("{type: log, minval: -4, maxval: -1, count: 2}"),
            "{type: log, minval: -4.0, maxval: -1.0, base: 10.0, count: 2}");
  EXPECT_EQ(Described("{type: categorical, vals: [16, \"16\", 16.0, true, relu]}"),
            "{type: categorical, vals: [16, \"16\", 16.0, true, \"relu\"]}");
}

TEST(HyperparameterSpaceTextTest, AConstIsItsValue) {
  EXPECT_EQ(Described("{type: const, val: 0.5}"), "0.5");
  EXPECT_EQ(Described("3"), "3");
  EXPECT_EQ(Described("3.0"), "3.0");
}

}  // namespace
}  // namespace cohort
