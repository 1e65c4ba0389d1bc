// The built-in optimizers' options as plain values: every field's range checked, and one line
// each for the logs.
#include "runtime/optim/optimizer_options.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

using Kind = OptimizerOptions::Kind;

TEST(OptimizerOptionsTest, ValidateChecksOptionsBuiltInCode) {
  OptimizerOptions options;
  options.learning_rate = 0.1;
  EXPECT_TRUE(ValidateOptimizerOptions(options).ok());
  options.eps = -1;
  EXPECT_EQ(ValidateOptimizerOptions(options).message(),
            "hyperparameter 'eps' = -1 is out of range; allowed: > 0");
}

TEST(OptimizerOptionsTest, Describe) {
  OptimizerOptions sgd;
  sgd.learning_rate = 0.1;
  EXPECT_EQ(DescribeOptimizer(sgd), "sgd(lr=0.1)");
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  EXPECT_EQ(DescribeOptimizer(sgd), "sgd(lr=0.1, momentum=0.9, nesterov)");
  sgd.weight_decay = 5e-4;
  EXPECT_EQ(DescribeOptimizer(sgd), "sgd(lr=0.1, momentum=0.9, nesterov, weight_decay=0.0005)");

  OptimizerOptions adamw;
  adamw.kind = Kind::kAdamW;
  adamw.learning_rate = 0.001;
  adamw.weight_decay = 0.01;
  EXPECT_EQ(DescribeOptimizer(adamw),
            "adamw(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.01)");
  EXPECT_EQ(OptimizerKindName(Kind::kAdamW), "adamw");
}

}  // namespace
}  // namespace cohort
