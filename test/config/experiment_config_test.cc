#include "runtime/config/experiment_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Kind = HyperparameterSpace::Kind;

// Hyperparameters come last so that tests can append to them.
constexpr char kMinimal[] = R"(
entrypoint: mlp
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
hyperparameters:
  global_batch_size: 32
)";

ExperimentConfig MustParse(absl::string_view yaml) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(yaml);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *std::move(config) : ExperimentConfig{};
}

// Each hyperparameter as "name: an int (3)".
std::vector<std::string> Described(const Hyperparameters& hp) {
  std::vector<std::string> out;
  for (const auto& [name, value] : hp.values()) out.push_back(name + ": " + DescribeValue(value));
  return out;
}

TEST(ExperimentConfigTest, MinimalConfigTakesDeterminedDefaults) {
  const ExperimentConfig c = MustParse(kMinimal);
  EXPECT_EQ(c.name, "experiment");
  EXPECT_EQ(c.description, "");
  EXPECT_EQ(c.entrypoint, "mlp");
  EXPECT_EQ(c.config_dir, "");
  EXPECT_EQ(c.global_batch_size, 32u);
  EXPECT_EQ(*c.hyperparameters.GetInt("global_batch_size"), 32);
  EXPECT_EQ(c.slots_per_trial, 1u);
  EXPECT_EQ(c.searcher.name, "single");
  EXPECT_EQ(c.searcher.metric, "validation_loss");
  EXPECT_TRUE(c.searcher.smaller_is_better);
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kBatches);
  EXPECT_EQ(c.searcher.max_length.value, 100u);
  EXPECT_FALSE(c.records_per_epoch.has_value());
  EXPECT_FALSE(c.min_validation_period.has_value());
  EXPECT_FALSE(c.min_checkpoint_period.has_value());
  EXPECT_EQ(c.scheduling_unit, 100u);
  EXPECT_EQ(c.optimizations.aggregation_frequency, 1u);
  EXPECT_TRUE(c.optimizations.average_aggregated_gradients);
  EXPECT_TRUE(c.optimizations.average_training_metrics);
  EXPECT_EQ(c.optimizations.gradient_compression.kind, CompressionOptions::kNone);
  EXPECT_EQ(c.optimizations.mixed_precision, "O0");
  EXPECT_EQ(c.optimizations.tensor_fusion_threshold, 64u);
  EXPECT_EQ(c.optimizations.tensor_fusion_cycle_time, 1u);
  EXPECT_FALSE(c.optimizations.auto_tune_tensor_fusion);
  EXPECT_EQ(c.checkpoint_storage.type, "shared_fs");
  EXPECT_EQ(c.checkpoint_storage.host_path, "");
  EXPECT_EQ(c.checkpoint_storage.storage_path, "");
  EXPECT_EQ(c.checkpoint_storage.save_trial_latest, 1u);
  EXPECT_EQ(c.checkpoint_storage.save_trial_best, 1u);
  EXPECT_EQ(c.checkpoint_storage.save_experiment_best, 0u);
  EXPECT_EQ(c.checkpoint_policy, CheckpointPolicy::kBest);
  EXPECT_EQ(c.max_restarts, 5u);
  EXPECT_FALSE(c.experiment_seed.has_value());
  EXPECT_FALSE(c.perform_initial_validation);
  EXPECT_TRUE(c.ignored_keys.empty());
}

TEST(ExperimentConfigTest, NullsMeanDefaults) {
  const ExperimentConfig c = MustParse(absl::StrCat(kMinimal, R"(
description: ~
optimizations: ~
max_restarts:
resources:
  slots_per_trial: null
)"));
  EXPECT_EQ(c.description, "");
  EXPECT_EQ(c.max_restarts, 5u);
  EXPECT_EQ(c.slots_per_trial, 1u);
  EXPECT_EQ(c.optimizations.aggregation_frequency, 1u);
}

// `tensor_fusion_threshold: auto` is auto_tune_tensor_fusion under the default threshold.
TEST(ExperimentConfigTest, TensorFusionThresholdAutoTunesUnderTheDefaultThreshold) {
  const ExperimentConfig c = MustParse(absl::StrCat(kMinimal, R"(
optimizations:
  tensor_fusion_threshold: auto
)"));
  EXPECT_TRUE(c.optimizations.auto_tune_tensor_fusion);
  EXPECT_EQ(c.optimizations.tensor_fusion_threshold, 64u);
}

TEST(ExperimentConfigTest, ReadsEveryField) {
  const ExperimentConfig c = MustParse(R"(
name: full
description: every key Cohort reads
entrypoint: ./build/plugins/mlp.so
hyperparameters:
  global_batch_size: {type: const, val: 96}
resources:
  slots_per_trial: 4
searcher:
  name: single
  metric: accuracy
  smaller_is_better: false
  max_length: {records: 6400}
records_per_epoch: 3200
min_validation_period: {epochs: 1}
min_checkpoint_period: {batches: 50}
scheduling_unit: 10
optimizations:
  aggregation_frequency: 4
  average_aggregated_gradients: false
  average_training_metrics: no
  gradient_compression: true
  mixed_precision: O1
  tensor_fusion_threshold: 16
  tensor_fusion_cycle_time: 0
  auto_tune_tensor_fusion: True
checkpoint_storage:
  type: shared_fs
  host_path: /mnt/ckpt
  storage_path: /mnt/ckpt/runs/./a/
  save_trial_latest: 3
  save_trial_best: 0
  save_experiment_best: 2
checkpoint_policy: all
max_restarts: 0
reproducibility:
  experiment_seed: 2147483647
perform_initial_validation: true
)");
  EXPECT_EQ(c.name, "full");
  EXPECT_EQ(c.description, "every key Cohort reads");
  EXPECT_EQ(c.entrypoint, "./build/plugins/mlp.so");
  EXPECT_EQ(c.global_batch_size, 96u);
  EXPECT_EQ(c.slots_per_trial, 4u);
  EXPECT_EQ(c.searcher.metric, "accuracy");
  EXPECT_FALSE(c.searcher.smaller_is_better);
  EXPECT_EQ(c.searcher.max_length.unit, LengthUnit::kRecords);
  EXPECT_EQ(c.searcher.max_length.value, 6400u);
  EXPECT_EQ(c.records_per_epoch, 3200u);
  ASSERT_TRUE(c.min_validation_period.has_value());
  EXPECT_EQ(c.min_validation_period->unit, LengthUnit::kEpochs);
  ASSERT_TRUE(c.min_checkpoint_period.has_value());
  EXPECT_EQ(c.min_checkpoint_period->value, 50u);
  EXPECT_EQ(c.scheduling_unit, 10u);
  EXPECT_EQ(c.optimizations.aggregation_frequency, 4u);
  EXPECT_FALSE(c.optimizations.average_aggregated_gradients);
  EXPECT_FALSE(c.optimizations.average_training_metrics);
  EXPECT_EQ(c.optimizations.gradient_compression.kind, CompressionOptions::kFp16);
  EXPECT_EQ(c.optimizations.mixed_precision, "O1");
  EXPECT_EQ(c.optimizations.tensor_fusion_threshold, 16u);
  EXPECT_EQ(c.optimizations.tensor_fusion_cycle_time, 0u);
  EXPECT_TRUE(c.optimizations.auto_tune_tensor_fusion);
  EXPECT_EQ(c.checkpoint_storage.host_path, "/mnt/ckpt");
  EXPECT_EQ(c.checkpoint_storage.storage_path, "runs/a");
  EXPECT_EQ(c.checkpoint_storage.save_trial_latest, 3u);
  EXPECT_EQ(c.checkpoint_storage.save_trial_best, 0u);
  EXPECT_EQ(c.checkpoint_storage.save_experiment_best, 2u);
  EXPECT_EQ(c.checkpoint_policy, CheckpointPolicy::kAll);
  EXPECT_EQ(c.max_restarts, 0u);
  EXPECT_EQ(c.experiment_seed, 2147483647u);
  EXPECT_TRUE(c.perform_initial_validation);
}

TEST(ExperimentConfigTest, EverySearchSpaceFormAndTheSingleSearchersChoice) {
  const ExperimentConfig c = MustParse(absl::StrCat(kMinimal, R"(
  count: 3
  ratio: 0.5
  nesterov: true
  optimizer_name: adam
  version: '3'
  layers: [64, 32]
  nothing: null
  explicit: {type: const, val: [1, 2]}
  width: {type: int, minval: 8, maxval: 13}
  shift: {type: int, minval: -3, maxval: 0}
  dropout: {type: double, minval: 0.2, maxval: 0.8, count: 4}
  lr: {type: log, minval: -4, maxval: -2}
  lr2: {type: log, minval: 1, maxval: 3, base: 2}
  activation: {type: categorical, vals: [relu, tanh]}
  optimizer:
    momentum: {type: double, minval: 0.8, maxval: 1.0}
    schedule:
      warmup: 100
)"));
  const Hyperparameters& hp = c.hyperparameters;
  EXPECT_EQ(*hp.GetInt("count"), 3);
  EXPECT_EQ(*hp.GetDouble("ratio"), 0.5);
  EXPECT_EQ(*hp.GetBool("nesterov"), true);
  EXPECT_EQ(**hp.GetString("optimizer_name"), "adam");
  EXPECT_EQ(**hp.GetString("version"), "3");
  EXPECT_EQ(hp.TypeOf("layers"), COHORT_HPARAM_OTHER);
  EXPECT_EQ(std::get<Hyperparameters::Other>(hp.values().at("layers")).text, "[64, 32]");
  EXPECT_EQ(hp.TypeOf("nothing"), COHORT_HPARAM_OTHER);
  EXPECT_EQ(std::get<Hyperparameters::Other>(hp.values().at("explicit")).text, "[1, 2]");
  EXPECT_EQ(*hp.GetInt("width"), 10);  // (8 + 13) / 2 rounded down
  EXPECT_EQ(*hp.GetInt("shift"), -2);  // -1.5 rounded down
  EXPECT_DOUBLE_EQ(*hp.GetDouble("dropout"), 0.5);
  EXPECT_DOUBLE_EQ(*hp.GetDouble("lr"), 1e-3);
  EXPECT_DOUBLE_EQ(*hp.GetDouble("lr2"), 4.0);
  EXPECT_EQ(**hp.GetString("activation"), "relu");
  EXPECT_DOUBLE_EQ(*hp.GetDouble("optimizer.momentum"), 0.9);
  EXPECT_EQ(*hp.GetInt("optimizer.schedule.warmup"), 100);

  const auto& spaces = c.hyperparameter_spaces;
  EXPECT_EQ(spaces.size(), hp.values().size());
  EXPECT_EQ(spaces.at("count").kind, Kind::kConst);
  EXPECT_EQ(spaces.at("explicit").kind, Kind::kConst);
  EXPECT_EQ(spaces.at("width").kind, Kind::kInt);
  EXPECT_EQ(spaces.at("width").minval, 8);
  EXPECT_EQ(spaces.at("width").maxval, 13);
  EXPECT_EQ(spaces.at("dropout").kind, Kind::kDouble);
  EXPECT_EQ(spaces.at("lr").kind, Kind::kLog);
  EXPECT_EQ(spaces.at("lr").base, 10);
  EXPECT_EQ(spaces.at("lr2").base, 2);
  const HyperparameterSpace& activation = spaces.at("activation");
  EXPECT_EQ(activation.kind, Kind::kCategorical);
  ASSERT_EQ(activation.vals.size(), 2u);
  EXPECT_EQ(std::get<std::string>(activation.vals[1]), "tanh");
  EXPECT_EQ(spaces.at("optimizer.momentum").kind, Kind::kDouble);
  EXPECT_EQ(spaces.count("optimizer"), 0u);
}

TEST(ExperimentConfigTest, SingleSearcherChoiceOfEachKind) {
  HyperparameterSpace space;
  space.kind = Kind::kInt;
  space.minval = -9007199254740992.0;
  space.maxval = 9007199254740992.0;
  EXPECT_EQ(std::get<int64_t>(SingleSearcherChoice(space)), 0);
  space.minval = 5;
  space.maxval = 5;
  EXPECT_EQ(std::get<int64_t>(SingleSearcherChoice(space)), 5);
  space.kind = Kind::kLog;
  space.base = 3;
  space.minval = 0;
  space.maxval = 4;
  EXPECT_DOUBLE_EQ(std::get<double>(SingleSearcherChoice(space)), 9.0);
  space.kind = Kind::kCategorical;
  space.vals = {Hyperparameters::Value(int64_t{7}), Hyperparameters::Value(std::string("x"))};
  EXPECT_EQ(std::get<int64_t>(SingleSearcherChoice(space)), 7);
}

// global_batch_size may be searched over integers (as Determined's adaptive examples do); the
// experiment's own value is then the single searcher's choice.
TEST(ExperimentConfigTest, GlobalBatchSizeMayBeASearchSpaceOfIntegers) {
  const std::string base = R"(
entrypoint: mlp
searcher: {name: grid, metric: loss, max_length: {records: 6400}}
resources: {slots_per_trial: 2}
hyperparameters:
  global_batch_size: )";
  ExperimentConfig c = MustParse(base + "64\n");
  EXPECT_EQ(c.global_batch_size, 64u);
  EXPECT_FALSE(c.global_batch_size_searched);
  c = MustParse(base + "{type: categorical, vals: [32, 128]}\n");
  EXPECT_EQ(c.global_batch_size, 32u);
  EXPECT_TRUE(c.global_batch_size_searched);
  c = MustParse(base + "{type: int, minval: 16, maxval: 64, count: 3}\n");
  EXPECT_EQ(c.global_batch_size, 40u);
  EXPECT_TRUE(c.global_batch_size_searched);
}

TEST(ExperimentConfigTest, LengthsInEachUnit) {
  struct Case {
    const char* yaml;
    LengthUnit unit;
    uint64_t value;
    const char* described;
  };
  for (const Case& c : {Case{"{batches: 100}", LengthUnit::kBatches, 100, "100 batches"},
                        Case{"{records: 6400}", LengthUnit::kRecords, 6400, "6400 records"},
                        Case{"{epochs: 2}", LengthUnit::kEpochs, 2, "2 epochs"},
                        Case{"{epochs: 1}", LengthUnit::kEpochs, 1, "1 epoch"},
                        Case{"{batches: 1}", LengthUnit::kBatches, 1, "1 batch"},
                        Case{"{records: 1}", LengthUnit::kRecords, 1, "1 record"},
                        Case{"250", LengthUnit::kBatches, 250, "250 batches"}}) {
    SCOPED_TRACE(c.yaml);
    absl::StatusOr<ExperimentConfig> config =
        ParseExperimentConfig(kMinimal, {absl::StrCat("searcher.max_length=", c.yaml),
                                         absl::StrCat("min_validation_period=", c.yaml),
                                         absl::StrCat("min_checkpoint_period=", c.yaml)});
    ASSERT_TRUE(config.ok()) << config.status();
    for (const Length& length : {config->searcher.max_length, *config->min_validation_period,
                                 *config->min_checkpoint_period}) {
      EXPECT_EQ(length.unit, c.unit);
      EXPECT_EQ(length.value, c.value);
      EXPECT_EQ(DescribeLength(length), c.described);
    }
  }
}

TEST(ExperimentConfigTest, ZeroPeriodsMeanNoMinimum) {
  const ExperimentConfig c = MustParse(absl::StrCat(kMinimal, R"(
min_validation_period: {batches: 0}
min_checkpoint_period: {epochs: 0}
)"));
  EXPECT_FALSE(c.min_validation_period.has_value());
  EXPECT_FALSE(c.min_checkpoint_period.has_value());
}

TEST(ExperimentConfigTest, IgnoredKeysAreReportedInOrder) {
  const ExperimentConfig c = MustParse(R"(
entrypoint: mlp
hyperparameters: {global_batch_size: 32}
searcher:
  name: single
  metric: validation_loss
  max_length: {batches: 100}
  max_trials: 1
  max_concurrent_trials: 2
environment:
  image: determinedai/environments:py-3.8
data: {url: https://example.org/data.tgz}
profiling: {enabled: true, begin_on_batch: 100, end_after_batch: 120, sync_timings: true}
bind_mounts: []
labels: [a]
workspace: research
project: mnist
resources:
  slots_per_trial: 2
  resource_pool: default
checkpoint_storage:
  propagation: rprivate
optimizations:
  grad_updates_size_file: sizes.txt
)");
  EXPECT_THAT(
      c.ignored_keys,
      ElementsAre("environment", "data", "bind_mounts", "labels", "workspace", "project",
                  "profiling.sync_timings", "searcher.max_trials", "searcher.max_concurrent_trials",
                  "optimizations.grad_updates_size_file", "checkpoint_storage.propagation"));
  EXPECT_TRUE(c.profiling_enabled);
  EXPECT_EQ(c.profiling_begin_on_batch, 100u);
  EXPECT_EQ(c.profiling_end_after_batch, std::optional<uint64_t>(120));
  EXPECT_EQ(c.slots_per_trial, 2u);
  EXPECT_EQ(c.resource_pool, "default");
}

TEST(ExperimentConfigTest, ReadsTheSlurmSection) {
  const ExperimentConfig c = MustParse(R"(entrypoint: mlp
hyperparameters: {global_batch_size: 32}
searcher: {name: single, metric: loss, max_length: {batches: 10}}
slurm:
  sbatch_args: [--time=01:00:00, "--constraint=a100"]
  gpu_type: a100
  slots_per_node: 4
)");
  EXPECT_THAT(c.slurm_sbatch_args, ElementsAre("--time=01:00:00", "--constraint=a100"));
  EXPECT_THAT(c.ignored_keys, ElementsAre("slurm.gpu_type", "slurm.slots_per_node"));
  absl::StatusOr<ExperimentConfig> bad = ParseExperimentConfig(R"(entrypoint: mlp
hyperparameters: {global_batch_size: 32}
searcher: {name: single, metric: loss, max_length: {batches: 10}}
slurm: {sbatch_args: --time=01:00:00}
)");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("slurm.sbatch_args"));
  EXPECT_THAT(bad.status().message(), HasSubstr("a list of sbatch options"));
}

TEST(ExperimentConfigTest, EffectiveYamlParsesToTheSameConfig) {
  const ExperimentConfig first = MustParse(absl::StrCat(kMinimal, R"(
  version: '3'
  flag: "true"
  text: "two\nlines"
  layers: [64, 32]
  lr: {type: log, minval: -4, maxval: -2}
optimizations: {aggregation_frequency: 2}
environment: {image: x}
)"));
  const ExperimentConfig second = MustParse(first.effective_yaml);
  EXPECT_EQ(second.effective_yaml, first.effective_yaml);
  EXPECT_EQ(Described(second.hyperparameters), Described(first.hyperparameters));
  EXPECT_EQ(**second.hyperparameters.GetString("version"), "3");
  EXPECT_EQ(**second.hyperparameters.GetString("flag"), "true");
  EXPECT_EQ(**second.hyperparameters.GetString("text"), "two\nlines");
  EXPECT_EQ(second.optimizations.aggregation_frequency, 2u);
  EXPECT_EQ(second.ignored_keys, first.ignored_keys);
  EXPECT_EQ(TrainingFingerprint(second), TrainingFingerprint(first));
  EXPECT_THAT(first.effective_yaml, HasSubstr("layers: [64, 32]"));
}

TEST(ExperimentConfigTest, EmptyTextIsAnEmptyConfig) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig("");
  EXPECT_EQ(config.status().message(),
            "entrypoint: expected a plugin name or the path of a plugin .so; got nothing");
  config = ParseExperimentConfig(
      "# only a comment\n",
      {"entrypoint=mlp", "hyperparameters.global_batch_size=8", "searcher.name=single",
       "searcher.metric=loss", "searcher.max_length.batches=3"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->global_batch_size, 8u);
}

TEST(ExperimentConfigTest, SyntaxErrorsNameLineAndColumn) {
  absl::StatusOr<ExperimentConfig> config =
      ParseExperimentConfig("entrypoint: mlp\nsearcher:\n  name: [single\n");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              StartsWith("YAML syntax error at line 4, column 1: "));
  config = ParseExperimentConfig("entrypoint: mlp\nname: a: b\n");
  EXPECT_THAT(std::string(config.status().message()),
              StartsWith("YAML syntax error at line 2, column 8: "));
}

class LoadExperimentConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / "cohort_config_load_test";
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& file, absl::string_view text) {
    const std::filesystem::path path = dir_ / file;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(LoadExperimentConfigTest, NameDefaultsToTheFileStem) {
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(Write("mnist.yaml", kMinimal));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "mnist");
  EXPECT_EQ(config->config_dir, dir_.string());

  config = LoadExperimentConfig(Write("named.yaml", absl::StrCat(kMinimal, "name: mine\n")));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "mine");
}

TEST_F(LoadExperimentConfigTest, ErrorsStartWithThePath) {
  const std::string missing = (dir_ / "missing.yaml").string();
  absl::StatusOr<ExperimentConfig> config = LoadExperimentConfig(missing);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(config.status().message(), missing + ": no such experiment config file");

  const std::string bad = Write("bad.yaml", absl::StrCat(kMinimal, "max_restarts: -1\n"));
  config = LoadExperimentConfig(bad);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(), bad + ": max_restarts: expected an integer >= 0; got -1");

  config = LoadExperimentConfig(dir_.string());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LoadExperimentConfigTest, OverridesApplyToFiles) {
  absl::StatusOr<ExperimentConfig> config =
      LoadExperimentConfig(Write("o.yaml", kMinimal), {"searcher.max_length.batches=7"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->searcher.max_length.value, 7u);
}

}  // namespace
}  // namespace cohort
