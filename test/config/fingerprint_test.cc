// TrainingFingerprint: stable, and sensitive to exactly what changes a trial's numbers.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

constexpr char kBase[] = R"(
name: base
description: the base
entrypoint: mlp
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
reproducibility:
  experiment_seed: 42
hyperparameters:
  global_batch_size: 32
  lr: 0.1
  layers: 2
  width: {type: int, minval: 16, maxval: 64}
)";

std::string FingerprintWith(std::vector<std::string> sets) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kBase, sets);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? TrainingFingerprint(*config) : "";
}

TEST(FingerprintTest, StableAcrossProcessesAndBuilds) {
  // A fixed value: a change here breaks every recorded checkpoint's resume.
  EXPECT_EQ(FingerprintWith({}), "4e02f927b3d194e2");
  EXPECT_EQ(FingerprintWith({}), FingerprintWith({}));
  EXPECT_EQ(FingerprintWith({}).size(), 16u);
}

TEST(FingerprintTest, IgnoresWhatDoesNotChangeTheNumbers) {
  const std::string base = FingerprintWith({});
  for (const char* set :
       {"name=other", "description=another description", "searcher.max_length.batches=5000",
        "searcher.metric=accuracy", "min_validation_period.batches=10",
        "min_checkpoint_period.epochs=1", "checkpoint_storage.host_path=/elsewhere",
        "max_restarts=0", "scheduling_unit=7", "entrypoint=/opt/plugins/mlp.so",
        "environment.image=x", "records_per_epoch=1000", "optimizations.tensor_fusion_threshold=8",
        "optimizations.average_training_metrics=false", "hyperparameters.width.maxval=65"}) {
    EXPECT_EQ(FingerprintWith({set}), base) << set;
  }
}

TEST(FingerprintTest, ChangesWithWhatChangesTheNumbers) {
  const std::string base = FingerprintWith({});
  for (const char* set :
       {"hyperparameters.lr=0.2", "hyperparameters.lr=0.1000000001", "hyperparameters.layers=3",
        "hyperparameters.layers=2.0", "hyperparameters.layers='2'", "hyperparameters.extra=1",
        "hyperparameters.width.maxval=66", "hyperparameters.global_batch_size=64",
        "reproducibility.experiment_seed=43", "reproducibility.experiment_seed=",
        "resources.slots_per_trial=2", "optimizations.aggregation_frequency=2",
        "optimizations.average_aggregated_gradients=false",
        "optimizations.gradient_compression=true", "optimizations.mixed_precision=O1"}) {
    EXPECT_NE(FingerprintWith({set}), base) << set;
  }
}

}  // namespace
}  // namespace cohort
