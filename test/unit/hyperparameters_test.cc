#include "runtime/plugin/hyperparameters.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(HyperparametersTest, AssignmentsInferTheType) {
  Hyperparameters hp;
  ASSERT_TRUE(hp.SetFromAssignment("layers=3").ok());
  ASSERT_TRUE(hp.SetFromAssignment("lr=1e-3").ok());
  ASSERT_TRUE(hp.SetFromAssignment("nesterov=true").ok());
  ASSERT_TRUE(hp.SetFromAssignment("data_dir=/tmp/mnist").ok());
  ASSERT_TRUE(hp.SetFromAssignment("empty=").ok());
  EXPECT_EQ(hp.TypeOf("layers"), COHORT_HPARAM_INT);
  EXPECT_EQ(hp.TypeOf("lr"), COHORT_HPARAM_DOUBLE);
  EXPECT_EQ(hp.TypeOf("nesterov"), COHORT_HPARAM_BOOL);
  EXPECT_EQ(hp.TypeOf("data_dir"), COHORT_HPARAM_STRING);
  EXPECT_EQ(**hp.GetString("empty"), "");
  EXPECT_DOUBLE_EQ(*hp.GetDouble("lr"), 1e-3);
  EXPECT_EQ(hp.SetFromAssignment("novalue").message(), "expected NAME=VALUE, got 'novalue'");
  EXPECT_FALSE(hp.SetFromAssignment("=3").ok());
}

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
