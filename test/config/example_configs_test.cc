// Configs in the shape of Determined's official mnist_pytorch and cifar10_pytorch examples load
// as they are.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;

std::string Example(const char* file) { return std::string(COHORT_CONFIG_TESTDATA) + "/" + file; }

TEST(ExampleConfigsTest, ConstLoads) {
  absl::StatusOr<ExperimentConfig> c = LoadExperimentConfig(Example("const.yaml"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "mnist_mlp_const");
  EXPECT_EQ(c->entrypoint, "mlp");
  EXPECT_EQ(c->config_dir, COHORT_CONFIG_TESTDATA);
  EXPECT_EQ(c->global_batch_size, 64u);
  EXPECT_EQ(*c->hyperparameters.GetInt("hidden_size"), 128);
  EXPECT_DOUBLE_EQ(*c->hyperparameters.GetDouble("learning_rate"), 1.0);
  EXPECT_EQ(c->records_per_epoch, 60000u);
  EXPECT_EQ(DescribeLength(c->searcher.max_length), "1 epoch");
  EXPECT_EQ(DescribeLength(*c->min_validation_period), "200 batches");
  EXPECT_EQ(DescribeLength(*c->min_checkpoint_period), "1 epoch");
  EXPECT_EQ(c->max_restarts, 0u);
  EXPECT_THAT(c->ignored_keys, ElementsAre("data", "environment"));
  EXPECT_TRUE(c->profiling_enabled);
  EXPECT_EQ(c->profiling_begin_on_batch, 0u);
  EXPECT_FALSE(c->profiling_end_after_batch.has_value()) << "null: to the end";
}

TEST(ExampleConfigsTest, DistributedLoads) {
  absl::StatusOr<ExperimentConfig> c = LoadExperimentConfig(Example("distributed.yaml"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->slots_per_trial, 8u);
  EXPECT_EQ(c->global_batch_size, 512u);
  EXPECT_EQ(c->searcher.max_length.value, 117u);
  EXPECT_EQ(c->optimizations.aggregation_frequency, 2u);
  EXPECT_EQ(c->optimizations.tensor_fusion_threshold, 32u);
  EXPECT_EQ(c->experiment_seed, 1234u);
  EXPECT_EQ(c->checkpoint_storage.host_path, "/mnt/checkpoints");
  EXPECT_EQ(c->checkpoint_storage.storage_path, "mnist");
  EXPECT_EQ(c->checkpoint_storage.save_trial_best, 2u);
  EXPECT_THAT(c->ignored_keys, ElementsAre("data", "bind_mounts", "labels", "resources.priority"));
  EXPECT_EQ(c->resource_pool, "gpu-pool") << "a Slurm partition under --resource-manager slurm";
}

TEST(ExampleConfigsTest, AdaptiveLoadsAsAnAshaSearch) {
  const std::string path = Example("adaptive.yaml");
  absl::StatusOr<ExperimentConfig> c = LoadExperimentConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "adaptive");
  EXPECT_EQ(c->searcher.name, "adaptive_asha");
  EXPECT_EQ(c->searcher.max_trials, 16u);
  EXPECT_EQ(c->searcher.mode, AshaMode::kStandard);
  EXPECT_EQ(c->searcher.max_concurrent_trials, 16u);
  EXPECT_EQ(c->hyperparameter_spaces.at("learning_rate").kind, HyperparameterSpace::Kind::kLog);
  EXPECT_THAT(c->ignored_keys, ElementsAre("data"));

  // As a single search it trains the midpoint trial; the ASHA keys are then ignored.
  c = LoadExperimentConfig(path, {"searcher.name=single"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(*c->hyperparameters.GetDouble("learning_rate"), 0.01);
  EXPECT_EQ(*c->hyperparameters.GetInt("hidden_size"), 143);
  EXPECT_DOUBLE_EQ(*c->hyperparameters.GetDouble("dropout1"), 0.5);
  EXPECT_EQ(**c->hyperparameters.GetString("optimizer"), "sgd");
  EXPECT_EQ(c->searcher.max_trials, 1u);
  EXPECT_THAT(c->ignored_keys, ElementsAre("data", "searcher.max_trials", "searcher.mode"));

  // As a grid search every range needs its number of points; the file alone is good, so the
  // message says the override made the error.
  c = LoadExperimentConfig(path, {"searcher.name=grid"});
  EXPECT_EQ(c.status().message(),
            path +
                " as --set changes it: hyperparameters.dropout1.count: expected an integer >= 1 "
                "(the grid searcher's number of points for this range); got nothing");
}

// The batch size is searched: each trial picks its own, and the searcher counts records.
TEST(ExampleConfigsTest, Cifar10AdaptiveSearchesTheBatchSize) {
  absl::StatusOr<ExperimentConfig> c = LoadExperimentConfig(Example("cifar10_adaptive.yaml"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->global_batch_size_searched);
  EXPECT_EQ(c->global_batch_size, 40u) << "the single searcher's midpoint";
  EXPECT_EQ(c->searcher.name, "adaptive_asha");
  EXPECT_EQ(DescribeLength(c->searcher.max_length), "32 epochs");
  EXPECT_EQ(c->records_per_epoch, 50000u);
  EXPECT_THAT(c->ignored_keys, ElementsAre("data"));
}

}  // namespace
}  // namespace cohort
