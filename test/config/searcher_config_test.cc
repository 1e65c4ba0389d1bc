// The searcher section for each searcher Cohort runs: the keys it reads, their defaults, and the
// Determined keys it ignores; grid counts on hyperparameter ranges.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kSearcherBase[] = R"(
entrypoint: mlp
hyperparameters:
  global_batch_size: 32
  width: {type: int, minval: 8, maxval: 64, count: 4}
  dropout: {type: double, minval: 0.1, maxval: 0.5, count: 3}
  lr: {type: log, minval: -4, maxval: -1, count: 2}
  act: {type: categorical, vals: [relu, tanh]}
)";

ExperimentConfig MustParseSearcher(absl::string_view searcher) {
  absl::StatusOr<ExperimentConfig> config =
      ParseExperimentConfig(absl::StrCat(kSearcherBase, "searcher:\n", searcher));
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *std::move(config) : ExperimentConfig{};
}

TEST(SearcherConfigTest, RandomReadsTrialsAndConcurrency) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: random
  metric: accuracy
  smaller_is_better: false
  max_trials: 12
  max_length: {epochs: 2}
  mode: aggressive
  source_trial_id: 7
)");
  EXPECT_EQ(c.searcher.name, "random");
  EXPECT_EQ(c.searcher.metric, "accuracy");
  EXPECT_FALSE(c.searcher.smaller_is_better);
  EXPECT_EQ(c.searcher.max_trials, 12u);
  EXPECT_EQ(c.searcher.max_concurrent_trials, 16u);  // Determined's default
  EXPECT_EQ(DescribeLength(c.searcher.max_length), "2 epochs");
  EXPECT_EQ(c.searcher.mode, AshaMode::kStandard);  // adaptive_asha's key: ignored here
  EXPECT_THAT(c.ignored_keys, ElementsAre("searcher.mode", "searcher.source_trial_id"));
  // The warning says which searcher reads a key this one ignores, and that Cohort uses none of
  // Determined's keys it has no searcher for.
  EXPECT_EQ(IgnoredKeyNote(c, "searcher.mode"),
            "searcher.mode is read by the adaptive_asha searcher, not by random: ignored");
  EXPECT_EQ(IgnoredKeyNote(c, "searcher.source_trial_id"),
            "searcher.source_trial_id is not used by Cohort and is ignored");
}

TEST(SearcherConfigTest, GridReadsConcurrencyAndIgnoresMaxTrials) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: grid
  metric: loss
  max_length: {batches: 50}
  max_concurrent_trials: 0
  max_trials: 3
)");
  EXPECT_EQ(c.searcher.name, "grid");
  EXPECT_EQ(c.searcher.max_concurrent_trials, 0u);  // as many as possible
  EXPECT_EQ(c.searcher.max_trials, 1u);
  EXPECT_THAT(c.ignored_keys, ElementsAre("searcher.max_trials"));
  EXPECT_EQ(IgnoredKeyNote(c, "searcher.max_trials"),
            "searcher.max_trials is read by the random and adaptive_asha searchers, not by grid: "
            "ignored");
  EXPECT_EQ(c.hyperparameter_spaces.at("width").count, 4u);
  EXPECT_EQ(c.hyperparameter_spaces.at("dropout").count, 3u);
  EXPECT_EQ(c.hyperparameter_spaces.at("lr").count, 2u);
  EXPECT_FALSE(c.hyperparameter_spaces.at("act").count.has_value());
}

TEST(SearcherConfigTest, AdaptiveAshaTakesDeterminedDefaults) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: adaptive_asha
  metric: loss
  max_length: {batches: 1000}
  max_trials: 64
)");
  const SearcherConfig& s = c.searcher;
  EXPECT_EQ(s.name, "adaptive_asha");
  EXPECT_EQ(s.max_trials, 64u);
  EXPECT_EQ(s.max_concurrent_trials, 16u);
  EXPECT_EQ(s.mode, AshaMode::kStandard);
  EXPECT_EQ(s.divisor, 4.0);
  EXPECT_EQ(s.max_rungs, 5u);
  EXPECT_THAT(s.bracket_rungs, IsEmpty());
  EXPECT_THAT(c.ignored_keys, IsEmpty());
}

TEST(SearcherConfigTest, AdaptiveAshaReadsEveryKey) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: adaptive_asha
  metric: accuracy
  smaller_is_better: false
  max_length: {records: 64000}
  max_trials: 200
  max_concurrent_trials: 8
  mode: conservative
  divisor: 3
  max_rungs: 4
  bracket_rungs: [4, 2]
  stop_once: true
  source_checkpoint_uuid: abc
)");
  const SearcherConfig& s = c.searcher;
  EXPECT_FALSE(s.smaller_is_better);
  EXPECT_EQ(s.max_trials, 200u);
  EXPECT_EQ(s.max_concurrent_trials, 8u);
  EXPECT_EQ(s.mode, AshaMode::kConservative);
  EXPECT_EQ(s.divisor, 3.0);
  EXPECT_EQ(s.max_rungs, 4u);
  EXPECT_THAT(s.bracket_rungs, ElementsAre(4, 2));
  EXPECT_THAT(c.ignored_keys, ElementsAre("searcher.stop_once", "searcher.source_checkpoint_uuid"));
}

TEST(SearcherConfigTest, ANullBracketRungsListIsTheDefault) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: adaptive_asha
  metric: loss
  max_length: {batches: 100}
  max_trials: 4
  bracket_rungs: ~
  divisor: 2.5
)");
  EXPECT_THAT(c.searcher.bracket_rungs, IsEmpty());
  EXPECT_EQ(c.searcher.divisor, 2.5);
}

TEST(SearcherConfigTest, SingleIgnoresTheOtherSearchersKeys) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: single
  metric: loss
  max_length: {batches: 100}
  max_trials: 9
  max_concurrent_trials: 2
  divisor: 3
)");
  EXPECT_EQ(c.searcher.max_trials, 1u);
  EXPECT_EQ(c.searcher.max_concurrent_trials, 16u);
  EXPECT_EQ(c.searcher.divisor, 4.0);
  EXPECT_THAT(c.ignored_keys, ElementsAre("searcher.max_trials", "searcher.max_concurrent_trials",
                                          "searcher.divisor"));
}

TEST(SearcherConfigTest, OnlyTheGridSearcherNeedsCounts) {
  const std::string no_counts = R"(
entrypoint: mlp
hyperparameters:
  global_batch_size: 32
  lr: {type: log, minval: -4, maxval: -1}
  act: {type: categorical, vals: [relu, tanh]}
searcher: {name: random, metric: loss, max_length: 10, max_trials: 2}
)";
  EXPECT_TRUE(ParseExperimentConfig(no_counts).ok());
  EXPECT_FALSE(ParseExperimentConfig(no_counts, {"searcher.name=grid"}).ok());
  // Categorical and constant hyperparameters need none.
  EXPECT_TRUE(
      ParseExperimentConfig(no_counts, {"searcher.name=grid", "hyperparameters.lr=0.1"}).ok());
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// Determined's newer ASHA configs give the length as max_time in time_metric: the same length as
// max_length, which a trial's config states instead.
TEST(SearcherConfigTest, MaxTimeInATimeMetricIsMaxLength) {
  const ExperimentConfig c = MustParseSearcher(R"(
  name: adaptive_asha
  metric: loss
  max_trials: 4
  max_time: 640
  time_metric: records
)");
  EXPECT_EQ(DescribeLength(c.searcher.max_length), "640 records");
  EXPECT_TRUE(c.searcher.max_length_as_time);
  EXPECT_THAT(c.ignored_keys, IsEmpty());

  const auto refused = [](absl::string_view searcher) {
    absl::StatusOr<ExperimentConfig> config =
        ParseExperimentConfig(absl::StrCat(kSearcherBase, "searcher:\n", searcher));
    return config.ok() ? std::string("parsed") : std::string(config.status().message());
  };
  EXPECT_EQ(refused("  name: single\n  metric: loss\n  max_time: 10\n  time_metric: loss\n"),
            "searcher.time_metric: expected one of batches, records, epochs; got 'loss'");
  EXPECT_EQ(refused("  name: single\n  metric: loss\n  max_time: 10\n"),
            "searcher.time_metric: expected batches, records or epochs; got nothing");
  EXPECT_THAT(refused("  name: single\n  metric: loss\n  max_time: 10\n  time_metric: batches\n"
                      "  max_length: {batches: 10}\n"),
              ::testing::HasSubstr("expected max_length, or max_time with time_metric; got both "
                                   "(a config written with max_time changes its length with --set "
                                   "searcher.max_time=N)"));
  EXPECT_THAT(refused("  name: single\n  metric: loss\n  time_metric: batches\n"
                      "  max_length: {batches: 10}\n"),
              ::testing::HasSubstr("searcher.max_length and searcher.time_metric: expected"));
  EXPECT_THAT(refused("  name: single\n  metric: loss\n"),
              ::testing::HasSubstr("searcher.max_length: expected a length such as {batches: "
                                   "1000} (or max_time with time_metric); got nothing"));
}

}  // namespace
}  // namespace cohort
