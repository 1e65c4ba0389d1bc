#include "runtime/plugin/hyperparameters.h"

#include <limits>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(HyperparametersTest, OnlyIntWidensToDouble) {
  Hyperparameters hp;
  hp.Set("n", 2);
  hp.Set("x", 2.5);
  hp.Set("flag", false);
  EXPECT_EQ(*hp.GetDouble("n"), 2.0);
  EXPECT_EQ(hp.GetInt("x").status().message(), "hyperparameter 'x' is a double (2.5), not an int");
  EXPECT_EQ(hp.GetDouble("flag").status().message(),
            "hyperparameter 'flag' is a bool (false), not a double");
  EXPECT_EQ(hp.GetBool("n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(hp.GetBool("missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(HyperparametersTest, MissingKeyListsWhatExists) {
  Hyperparameters empty;
  EXPECT_EQ(empty.GetInt("a").status().message(),
            "hyperparameter 'a' is not set; the trial has: none");
}

// A whole double keeps its type in text: "16.0" reads back as a double where "16" would be an int.
TEST(HyperparametersTest, ADoubleReadsAsADoubleInItsText) {
  Hyperparameters hp;
  hp.Set("batch", 16.0);
  hp.Set("lr", 0.1);
  hp.Set("big", 1e300);
  hp.Set("top", std::numeric_limits<double>::infinity());
  EXPECT_EQ(hp.GetInt("batch").status().message(),
            "hyperparameter 'batch' is a double (16.0), not an int");
  EXPECT_EQ(*hp.GetText("batch"), "16.0");
  EXPECT_EQ(*hp.GetText("lr"), "0.1");
  EXPECT_EQ(*hp.GetText("big"), "1e+300");
  EXPECT_EQ(*hp.GetText("top"), ".inf");
  EXPECT_EQ(YamlDoubleText(-std::numeric_limits<double>::infinity()), "-.inf");
  EXPECT_EQ(YamlDoubleText(std::numeric_limits<double>::quiet_NaN()), ".nan");
  EXPECT_EQ(YamlDoubleText(-0.5), "-0.5");
}

}  // namespace
}  // namespace cohort
