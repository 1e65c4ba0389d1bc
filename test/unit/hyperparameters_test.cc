#include "runtime/plugin/hyperparameters.h"

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

}  // namespace
}  // namespace cohort
