// Reading optimizer options from hyperparameters: defaults per optimizer, ints as doubles, and
// errors that name the hyperparameter, its value and the allowed range.
#include "runtime/config/optimizer_hyperparameters.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using OptimizerKind = OptimizerOptions::Kind;

absl::StatusOr<OptimizerOptions> ReadOptimizer(
    std::initializer_list<std::pair<const char*, Hyperparameters::Value>> values) {
  Hyperparameters hp;
  for (const auto& [name, value] : values) hp.Set(name, value);
  return OptimizerOptionsFromHyperparameters(hp);
}

std::string OptimizerError(
    std::initializer_list<std::pair<const char*, Hyperparameters::Value>> values) {
  absl::StatusOr<OptimizerOptions> options = ReadOptimizer(values);
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << options.status();
  return std::string(options.status().message());
}

TEST(OptimizerHyperparametersTest, SgdIsTheDefaultAndNeedsALearningRate) {
  EXPECT_EQ(OptimizerError({}),
            "hyperparameter 'learning_rate' is required for optimizer sgd (it has no default); "
            "allowed: > 0");
  EXPECT_EQ(OptimizerError({{"learnig_rate", 0.1}, {"momentum", 0.9}}),
            "hyperparameter 'learning_rate' is required for optimizer sgd (it has no default); "
            "allowed: > 0 (did you mean 'learning_rate' where the config has 'learnig_rate'?)");
  auto options = ReadOptimizer({{"learning_rate", 0.1}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, OptimizerKind::kSgd);
  EXPECT_EQ(options->learning_rate, 0.1);
  EXPECT_EQ(options->momentum, 0);
  EXPECT_FALSE(options->nesterov);
  EXPECT_EQ(options->weight_decay, 0);
}

// Null (`~`, `--set momentum=`) means the default, as config.md says: it used to be refused as
// "null, not a double".
TEST(OptimizerHyperparametersTest, ANullMeansTheDefault) {
  const Hyperparameters::Value null = Hyperparameters::Other{"~"};
  auto options = ReadOptimizer({{"learning_rate", 0.1}, {"momentum", null}, {"nesterov", null},
                                {"optimizer", null}, {"weight_decay", null}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, OptimizerKind::kSgd);
  EXPECT_EQ(options->momentum, 0);
  EXPECT_FALSE(options->nesterov);
  EXPECT_EQ(options->weight_decay, 0);
  options = ReadOptimizer({{"optimizer", std::string("adam")}, {"beta1", null}, {"eps", null}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->beta1, 0.9);
  EXPECT_EQ(options->eps, 1e-8);
  EXPECT_EQ(options->learning_rate, 0.001);
  // A learning rate sgd requires is still required.
  EXPECT_EQ(OptimizerError({{"learning_rate", null}}),
            "hyperparameter 'learning_rate' is required for optimizer sgd (it has no default); "
            "allowed: > 0");
}

TEST(OptimizerHyperparametersTest, ReadsEverySgdField) {
  auto options = ReadOptimizer({{"optimizer", std::string("sgd")},
                                {"learning_rate", 0.05},
                                {"momentum", 0.9},
                                {"nesterov", true},
                                {"weight_decay", 1e-4}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->momentum, 0.9);
  EXPECT_TRUE(options->nesterov);
  EXPECT_EQ(options->weight_decay, 1e-4);
}

TEST(OptimizerHyperparametersTest, AcceptsIntsWhereDoublesAreExpected) {
  auto options = ReadOptimizer(
      {{"learning_rate", int64_t{1}}, {"momentum", int64_t{0}}, {"weight_decay", int64_t{2}}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->learning_rate, 1.0);
  EXPECT_EQ(options->weight_decay, 2.0);
  auto adam = ReadOptimizer({{"optimizer", std::string("adam")}, {"beta1", int64_t{0}}});
  ASSERT_TRUE(adam.ok()) << adam.status();
  EXPECT_EQ(adam->beta1, 0.0);
}

TEST(OptimizerHyperparametersTest, AdamDefaults) {
  auto options = ReadOptimizer({{"optimizer", std::string("adam")}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, OptimizerKind::kAdam);
  EXPECT_EQ(options->learning_rate, 0.001);
  EXPECT_EQ(options->weight_decay, 0);
  EXPECT_EQ(options->beta1, 0.9);
  EXPECT_EQ(options->beta2, 0.999);
  EXPECT_EQ(options->eps, 1e-8);
}

TEST(OptimizerHyperparametersTest, AdamWDefaultsToDecoupledDecayAndReadsBetas) {
  auto options = ReadOptimizer({{"optimizer", std::string("adamw")}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->kind, OptimizerKind::kAdamW);
  EXPECT_EQ(options->learning_rate, 0.001);
  EXPECT_EQ(options->weight_decay, 0.01);
  auto custom = ReadOptimizer({{"optimizer", std::string("adamw")},
                               {"learning_rate", 3e-4},
                               {"beta1", 0.8},
                               {"beta2", 0.95},
                               {"eps", 1e-6},
                               {"weight_decay", 0.1}});
  ASSERT_TRUE(custom.ok()) << custom.status();
  EXPECT_EQ(custom->learning_rate, 3e-4);
  EXPECT_EQ(custom->beta1, 0.8);
  EXPECT_EQ(custom->beta2, 0.95);
  EXPECT_EQ(custom->eps, 1e-6);
  EXPECT_EQ(custom->weight_decay, 0.1);
}

TEST(OptimizerHyperparametersTest, OnlyTheChosenOptimizersHyperparametersAreRead) {
  // A model's own hyperparameters may share these names; they do not concern the other optimizer.
  EXPECT_TRUE(
      ReadOptimizer({{"learning_rate", 0.1}, {"beta1", std::string("model-specific")}}).ok());
  auto adam =
      ReadOptimizer({{"optimizer", std::string("adam")}, {"momentum", 7.0}, {"nesterov", true}});
  ASSERT_TRUE(adam.ok()) << adam.status();
  EXPECT_EQ(adam->momentum, 0);
  EXPECT_FALSE(adam->nesterov);
}

TEST(OptimizerHyperparametersTest, OutOfRangeValuesNameTheHyperparameterValueAndRange) {
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.0}}),
            "hyperparameter 'learning_rate' = 0 is out of range; allowed: > 0");
  EXPECT_EQ(OptimizerError({{"learning_rate", -0.5}}),
            "hyperparameter 'learning_rate' = -0.5 is out of range; allowed: > 0");
  EXPECT_EQ(OptimizerError({{"optimizer", std::string("adam")}, {"learning_rate", std::nan("")}}),
            "hyperparameter 'learning_rate' = nan is out of range; allowed: > 0");
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.1}, {"momentum", 1.0}}),
            "hyperparameter 'momentum' = 1 is out of range; allowed: [0, 1)");
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.1}, {"momentum", -0.1}}),
            "hyperparameter 'momentum' = -0.1 is out of range; allowed: [0, 1)");
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.1}, {"weight_decay", -1e-4}}),
            "hyperparameter 'weight_decay' = -0.0001 is out of range; allowed: >= 0");
  EXPECT_EQ(OptimizerError({{"optimizer", std::string("adam")}, {"beta1", 1.0}}),
            "hyperparameter 'beta1' = 1 is out of range; allowed: [0, 1)");
  EXPECT_EQ(OptimizerError({{"optimizer", std::string("adamw")}, {"beta2", -0.5}}),
            "hyperparameter 'beta2' = -0.5 is out of range; allowed: [0, 1)");
  EXPECT_EQ(OptimizerError({{"optimizer", std::string("adam")}, {"eps", 0.0}}),
            "hyperparameter 'eps' = 0 is out of range; allowed: > 0");
  EXPECT_THAT(OptimizerError({{"learning_rate", std::numeric_limits<double>::infinity()}}),
              HasSubstr("'learning_rate' = inf is out of range"));
}

TEST(OptimizerHyperparametersTest, UnknownOptimizerListsTheKnownOnes) {
  EXPECT_EQ(
      OptimizerError({{"optimizer", std::string("rmsprop")}, {"learning_rate", 0.1}}),
      "hyperparameter 'optimizer' = \"rmsprop\" is not a known optimizer; known: sgd, adam, adamw");
  EXPECT_THAT(OptimizerError({{"optimizer", std::string("Adam")}}),
              HasSubstr("\"Adam\" is not a known optimizer"));
}

TEST(OptimizerHyperparametersTest, NesterovNeedsMomentum) {
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.1}, {"nesterov", true}}),
            "hyperparameter 'nesterov' = true requires 'momentum' > 0, but momentum = 0");
  EXPECT_TRUE(ReadOptimizer({{"learning_rate", 0.1}, {"nesterov", false}}).ok());
}

TEST(OptimizerHyperparametersTest, WrongTypesNameTheHyperparameter) {
  EXPECT_EQ(OptimizerError({{"learning_rate", std::string("fast")}}),
            "hyperparameter 'learning_rate' is a string (\"fast\"), not a double");
  EXPECT_EQ(OptimizerError({{"optimizer", int64_t{3}}}),
            "hyperparameter 'optimizer' is an int (3), not a string");
  EXPECT_EQ(OptimizerError({{"learning_rate", 0.1}, {"nesterov", int64_t{1}}}),
            "hyperparameter 'nesterov' is an int (1), not a bool");
  EXPECT_THAT(OptimizerError({{"optimizer", std::string("adam")}, {"beta2", true}}),
              HasSubstr("'beta2' is a bool"));
}

TEST(OptimizerHyperparametersTest, AdamAndAdamWDescribeTheirDefaults) {
  auto adam = ReadOptimizer({{"optimizer", std::string("adam")}});
  ASSERT_TRUE(adam.ok());
  EXPECT_EQ(DescribeOptimizer(*adam), "adam(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08)");
  auto adamw = ReadOptimizer({{"optimizer", std::string("adamw")}});
  ASSERT_TRUE(adamw.ok());
  EXPECT_EQ(DescribeOptimizer(*adamw),
            "adamw(lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.01)");
}

TEST(OptimizerHyperparametersTest, KeysOfTheBuiltInOptimizerAreRefusedBesideThePluginsOwn) {
  OptimizationsConfig optimizations;
  EXPECT_TRUE(CheckOwnOptimizerKeys(optimizations, "own").ok());
  optimizations.learning_rate_scaling = LearningRateScaling::kSqrt;
  absl::Status scaled = CheckOwnOptimizerKeys(optimizations, "own");
  EXPECT_EQ(scaled.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(scaled.message(),
              HasSubstr("optimizations.learning_rate_scaling sqrt scales the built-in optimizer's "
                        "learning rate, but plugin own steps its own optimizer (optimizer_step)"));
  // Both set: zero_stage is named.
  optimizations.zero_stage = 2;
  EXPECT_THAT(CheckOwnOptimizerKeys(optimizations, "own").message(),
              HasSubstr("optimizations.zero_stage 2 shards the built-in optimizer, but plugin own "
                        "steps its own optimizer"));
}

}  // namespace
}  // namespace cohort
