// TrainingFingerprint: stable, and sensitive to exactly what changes a trial's numbers.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

constexpr char kFingerprintBase[] = R"(
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
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kFingerprintBase, sets);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? TrainingFingerprint(*config) : "";
}

TEST(FingerprintTest, StableAcrossProcessesAndBuilds) {
  // A fixed value: a change here breaks every recorded checkpoint's resume.
  EXPECT_EQ(FingerprintWith({}), "680e7fb9f2f4e647");
  EXPECT_EQ(FingerprintWith({}), FingerprintWith({}));
  EXPECT_EQ(FingerprintWith({}).size(), 16u);
}

ExperimentConfig ConfigWith(std::vector<std::string> sets) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kFingerprintBase, sets);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig{};
}

TEST(FingerprintTest, ASlotChangeGoesOnWhenTheGlobalBatchStaysAndNoCompressionKeepsState) {
  const ExperimentConfig one = ConfigWith({"hyperparameters.global_batch_size=16"});
  EXPECT_TRUE(CheckSlotChange(one, one).ok());
  EXPECT_TRUE(CheckSlotChange(one, ConfigWith({"hyperparameters.global_batch_size=16",
                                               "resources.slots_per_trial=4"}))
                  .ok());
  EXPECT_TRUE(CheckSlotChange(one, ConfigWith({"hyperparameters.global_batch_size=16",
                                               "resources.slots_per_trial=2",
                                               "optimizations.gradient_compression=fp16"}))
                  .ok())
      << "fp16 keeps no state of its own";
  const absl::Status odd = CheckSlotChange(
      ConfigWith({"hyperparameters.global_batch_size=15"}),
      ConfigWith({"hyperparameters.global_batch_size=15", "resources.slots_per_trial=2"}));
  EXPECT_EQ(odd.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(odd.message()),
      ::testing::HasSubstr("a global batch of 15 trained 15 records per batch at 1 slot and "
                           "would train 14 at 2 slots"));
  // The counts it names keep the records per batch (33 at 2 slots trains 32: 4 does too, 1 not).
  const absl::Status more = CheckSlotChange(
      ConfigWith({"hyperparameters.global_batch_size=33", "resources.slots_per_trial=2"}),
      ConfigWith({"hyperparameters.global_batch_size=33", "resources.slots_per_trial=3"}));
  EXPECT_THAT(std::string(more.message()),
              ::testing::HasSubstr("would train 33 at 3 slots (each slot trains "
                                   "global_batch_size / slots records, the rest dropped), and a "
                                   "trial goes on only with the records per batch it trained: "
                                   "slot counts that keep 32 are 2, 4, 8, 16, 32"));
  const absl::Status topk = CheckSlotChange(
      one, ConfigWith({"hyperparameters.global_batch_size=16", "resources.slots_per_trial=2",
                       "optimizations.gradient_compression={type: topk, ratio: 0.1}"}));
  EXPECT_THAT(std::string(topk.message()),
              ::testing::HasSubstr("optimizations.gradient_compression topk keeps state of its "
                                   "own on each slot, so the trial goes on at 1 slot only"));
}

TEST(FingerprintTest, ElasticSlotCountsKeepTheRecordsPerBatch) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(
      kFingerprintBase, {"resources.slots_per_trial=8", "resources.min_slots_per_trial=2"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->min_slots_per_trial, 2u);
  // 32 records: 8, 4 and 2 slots train all 32; 7, 6, 5 and 3 would drop some.
  EXPECT_THAT(ElasticSlotCounts(*config, 32), ::testing::ElementsAre(8, 4, 2));
  // A trial of its own global batch (a searched one): 24 records at 8 slots, so 6, 4, 3 and 2 too.
  EXPECT_THAT(ElasticSlotCounts(*config, 24), ::testing::ElementsAre(8, 6, 4, 3, 2));
  config->min_slots_per_trial = 0;  // not elastic
  EXPECT_THAT(ElasticSlotCounts(*config, 32), ::testing::ElementsAre(8));
  // Not a training setting: an elastic trial resumes whatever its minimum.
  EXPECT_EQ(FingerprintWith({"resources.min_slots_per_trial=1"}), FingerprintWith({}));
}

TEST(FingerprintTest, TrainingChangesNameEachSettingWithBothValues) {
  const ExperimentConfig base = ConfigWith({});
  EXPECT_TRUE(TrainingChanges(base, ConfigWith({"searcher.max_length.batches=500"})).empty());
  EXPECT_EQ(
      TrainingChanges(base, ConfigWith({"hyperparameters.lr=0.01", "resources.slots_per_trial=2"})),
      (std::vector<std::string>{"hyperparameters.lr: 0.1 before, 0.01 now",
                                "resources.slots_per_trial: 1 before, 2 now"}));
  EXPECT_EQ(TrainingChanges(base, ConfigWith({"hyperparameters.extra=true"})),
            (std::vector<std::string>{"hyperparameters.extra: not set before, true now"}));
  EXPECT_EQ(TrainingChanges(ConfigWith({"hyperparameters.extra=\"x\""}), base),
            (std::vector<std::string>{"hyperparameters.extra: \"x\" before, not set now"}));
  // Compression as the config says it, not as the fingerprint's canonical text does.
  EXPECT_EQ(TrainingChanges(base, ConfigWith({"optimizations.gradient_compression={type: topk, "
                                              "ratio: 0.5}"})),
            (std::vector<std::string>{
                "optimizations.gradient_compression: none before, topk (ratio 0.5) now"}));
  // A setting that counts only away from its default names the default on the other side.
  EXPECT_EQ(TrainingChanges(ConfigWith({"optimizations.learning_rate_scaling=linear"}),
                            ConfigWith({"optimizations.learning_rate_scaling=none"})),
            (std::vector<std::string>{
                "optimizations.learning_rate_reference_slots: 1 before, unused (no scaling) now",
                "optimizations.learning_rate_scaling: linear before, none now"}));
  EXPECT_EQ(
      TrainingChanges(base, ConfigWith({"optimizations.nonfinite_gradients=skip"})),
      (std::vector<std::string>{"optimizations.nonfinite_gradients: ignore before, skip now"}));
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
        "reproducibility.experiment_seed=43",
        "reproducibility.experiment_seed=", "resources.slots_per_trial=2",
        "optimizations.aggregation_frequency=2", "optimizations.average_aggregated_gradients=false",
        "optimizations.gradient_compression=true", "optimizations.mixed_precision=O1"}) {
    EXPECT_NE(FingerprintWith({set}), base) << set;
  }
}

TEST(FingerprintTest, ChangesWithTheCompressionKindAndItsParameters) {
  const std::vector<std::string> settings = {
      "optimizations.gradient_compression=false",
      "optimizations.gradient_compression=fp16",
      "optimizations.gradient_compression=bf16",
      "optimizations.gradient_compression={type: topk, ratio: 0.01}",
      "optimizations.gradient_compression={type: topk, ratio: 0.02}",
      "optimizations.gradient_compression={type: topk, ratio: 0.010000000000000002}",
      "optimizations.gradient_compression={type: powersgd, rank: 1, start_iter: 10}",
      "optimizations.gradient_compression={type: powersgd, rank: 2, start_iter: 10}",
      "optimizations.gradient_compression={type: powersgd, rank: 1, start_iter: 11}",
  };
  for (size_t i = 0; i < settings.size(); ++i) {
    for (size_t j = i + 1; j < settings.size(); ++j) {
      EXPECT_NE(FingerprintWith({settings[i]}), FingerprintWith({settings[j]}))
          << settings[i] << " vs " << settings[j];
    }
  }
}

TEST(FingerprintTest, SameCompressionWrittenDifferentlyIsTheSame) {
  const std::string fp16 = FingerprintWith({"optimizations.gradient_compression=fp16"});
  EXPECT_EQ(FingerprintWith({"optimizations.gradient_compression=true"}), fp16);
  EXPECT_EQ(FingerprintWith({"optimizations.gradient_compression={type: fp16}"}), fp16);
  EXPECT_EQ(FingerprintWith({"optimizations.gradient_compression=false"}), FingerprintWith({}));
  EXPECT_EQ(FingerprintWith({"optimizations.gradient_compression={type: powersgd}"}),
            FingerprintWith({"optimizations.gradient_compression={type: powersgd, rank: 1, "
                             "start_iter: 1000}"}));
}

}  // namespace
}  // namespace cohort
