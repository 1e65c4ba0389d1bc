// Trial configs and the searcher's unit: lengths in batches, or in records when the global batch
// size is searched and max_length counts records or epochs.
#include "runtime/orchestrator/trial_config.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

ExperimentConfig Config(const std::string& global_batch_size, const std::string& max_length) {
  absl::StatusOr<ExperimentConfig> config =
      ParseExperimentConfig(absl::StrCat("entrypoint: /opt/plugins/libmlp.so\n"
                                         "records_per_epoch: 1000\n"
                                         "searcher: {name: grid, metric: loss, max_length: ",
                                         max_length,
                                         "}\n"
                                         "hyperparameters:\n"
                                         "  global_batch_size: ",
                                         global_batch_size, "\n"));
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig{};
}

TEST(TrialConfigTest, TheSearcherCountsBatchesUnlessTheBatchSizeIsSearchedOverRecords) {
  struct Case {
    const char* batch;
    const char* length;
    uint64_t value;
    bool in_records;
  };
  const Case cases[] = {
      {"32", "{records: 6400}", 200, false},  // one batch size: batches, as always
      {"32", "{epochs: 2}", 63, false},
      {"{type: categorical, vals: [16, 64]}", "{batches: 50}", 50, false},  // each its own
      {"{type: categorical, vals: [16, 64]}", "{records: 6400}", 6400, true},
      {"{type: int, minval: 16, maxval: 64, count: 2}", "{epochs: 2}", 2000, true},
  };
  for (const Case& c : cases) {
    const absl::StatusOr<SearcherLength> length = SearcherMaxLength(Config(c.batch, c.length));
    ASSERT_TRUE(length.ok()) << length.status();
    EXPECT_EQ(length->value, c.value) << c.batch << " " << c.length;
    EXPECT_EQ(length->in_records, c.in_records) << c.batch << " " << c.length;
  }
}

TEST(TrialConfigTest, ATrialTrainsTheBatchesOfItsOwnSizeThatHoldTheRecords) {
  EXPECT_EQ(TrialBatches(6400, true, 16, 1), 400u);
  EXPECT_EQ(TrialBatches(6400, true, 64, 1), 100u);
  EXPECT_EQ(TrialBatches(6401, true, 64, 1), 101u);  // at least the records asked
  EXPECT_EQ(TrialBatches(50, false, 64, 1), 50u);
}

TEST(TrialConfigTest, ABatchTheSlotsCannotSplitHoldsTheRecordsTheyTrain) {
  // 33 over 2 slots trains 32 records a batch: 6400 records are 200 batches, not 194.
  EXPECT_EQ(TrialBatches(6400, true, 33, 2), 200u);
  EXPECT_EQ(TrialBatches(6400, true, 33, 1), 194u);
  EXPECT_EQ(TrialBatches(6400, true, 64, 2), 100u);  // a multiple drops nothing
  EXPECT_EQ(TrialBatches(50, false, 33, 2), 50u);    // batches stay batches
}

TEST(TrialConfigTest, MaxLengthInRecordsCountsTheRecordsABatchTrains) {
  ExperimentConfig config;
  config.global_batch_size = 33;
  config.slots_per_trial = 2;
  config.records_per_epoch = 60000;
  config.searcher.max_length = Length{LengthUnit::kEpochs, 1};
  absl::StatusOr<uint64_t> batches = MaxLengthInBatches(config);
  ASSERT_TRUE(batches.ok()) << batches.status();
  EXPECT_EQ(*batches, 1875u);  // 60000 / 32: every record of the epoch once
  config.slots_per_trial = 1;
  batches = MaxLengthInBatches(config);
  ASSERT_TRUE(batches.ok()) << batches.status();
  EXPECT_EQ(*batches, 1819u);  // ceil(60000 / 33)
}

TEST(TrialConfigTest, ATrialsConfigHoldsItsOwnBatchSize) {
  const ExperimentConfig experiment =
      Config("{type: categorical, vals: [16, 64]}", "{records: 6400}");
  Hyperparameters hparams;
  hparams.Set("global_batch_size", 64);
  const absl::StatusOr<std::string> yaml = TrialConfigYaml(experiment, hparams, 100);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const absl::StatusOr<ExperimentConfig> trial = ParseExperimentConfig(*yaml);
  ASSERT_TRUE(trial.ok()) << trial.status();
  EXPECT_EQ(trial->global_batch_size, 64u);
  EXPECT_FALSE(trial->global_batch_size_searched);
  EXPECT_EQ(trial->searcher.max_length.value, 100u);
  EXPECT_EQ(trial->searcher.max_length.unit, LengthUnit::kBatches);
}

// The config a task of the trial runs, as its workers read it.
absl::StatusOr<ExperimentConfig> TrialOf(const ExperimentConfig& experiment,
                                         const Hyperparameters& hparams, uint64_t batches) {
  const absl::StatusOr<std::string> yaml = TrialConfigYaml(experiment, hparams, batches);
  if (!yaml.ok()) return yaml.status();
  return ParseExperimentConfig(*yaml);
}

// A constant's map (or a categorical's) reaches the trial as one value, not as a group of
// hyperparameters named by its keys.
TEST(TrialConfigTest, AMapValueStaysOneHyperparameter) {
  const ExperimentConfig experiment = Config("32", "{batches: 10}");
  Hyperparameters hparams;
  hparams.Set("global_batch_size", 32);
  hparams.Set("arch", Hyperparameters::Other{"{depth: 2, widths: [1, 2]}"});
  hparams.Set("layers", Hyperparameters::Other{"[64, 32]"});
  hparams.Set("dump", Hyperparameters::Other{"~"});  // a null: the plugin's default
  const absl::StatusOr<ExperimentConfig> trial = TrialOf(experiment, hparams, 10);
  ASSERT_TRUE(trial.ok()) << trial.status();
  EXPECT_EQ(trial->hyperparameters.GetText("arch").value_or(""), "{depth: 2, widths: [1, 2]}");
  EXPECT_EQ(trial->hyperparameters.GetText("layers").value_or(""), "[64, 32]");
  EXPECT_FALSE(trial->hyperparameters.GetText("arch.depth").ok());
  EXPECT_EQ(trial->hyperparameters.GetText("dump").value_or(""), "~");
}

// A single-trial experiment whose length is `max_time` in `time_metric`.
absl::StatusOr<ExperimentConfig> MaxTimeConfig(int max_time, const std::string& time_metric,
                                               int global_batch_size) {
  return ParseExperimentConfig(absl::StrCat(
      "entrypoint: /opt/plugins/libmlp.so\n",
      "searcher: {name: single, metric: loss, max_time: ", max_time, ", time_metric: ", time_metric,
      "}\n", "hyperparameters: {global_batch_size: ", global_batch_size, "}\n"));
}

// An experiment whose length is max_time in time_metric: its trials' configs state max_length.
TEST(TrialConfigTest, ATrialOfAMaxTimeExperimentStatesMaxLength) {
  absl::StatusOr<ExperimentConfig> experiment = MaxTimeConfig(300, "batches", 32);
  ASSERT_TRUE(experiment.ok()) << experiment.status();
  Hyperparameters hparams;
  hparams.Set("global_batch_size", 32);
  const absl::StatusOr<ExperimentConfig> trial = TrialOf(*experiment, hparams, 120);
  ASSERT_TRUE(trial.ok()) << trial.status();
  EXPECT_EQ(DescribeLength(trial->searcher.max_length), "120 batches");
  EXPECT_FALSE(trial->searcher.max_length_as_time);
}

TEST(TrialConfigTest, ALengthInEpochsNeedsRecordsPerEpoch) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(
      "entrypoint: /opt/plugins/libmlp.so\n"
      "searcher: {name: grid, metric: loss, max_length: {epochs: 2}}\n"
      "hyperparameters: {global_batch_size: {type: categorical, vals: [16, 64]}}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(SearcherMaxLength(*config).status().message(), HasSubstr("records_per_epoch"));
}

// Its errors name the key the length was written with: max_time and time_metric are not told to
// change a max_length they do not have.
TEST(TrialConfigTest, AMaxTimeLengthIsNamedAsWritten) {
  absl::StatusOr<ExperimentConfig> config = MaxTimeConfig(2, "epochs", 16);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(
      MaxLengthInBatches(*config).status().message(),
      "searcher.max_time: a length in epochs needs records_per_epoch (the orchestrator cannot "
      "count the plugin's records): set records_per_epoch, or set time_metric to batches or "
      "records");
  config->records_per_epoch = 1 << 20;
  config->searcher.max_length.value = uint64_t{1} << 40;
  EXPECT_THAT(MaxLengthInBatches(*config).status().message(),
              HasSubstr("searcher.max_time: 1099511627776 epochs comes to more than"));
}

}  // namespace
}  // namespace cohort
