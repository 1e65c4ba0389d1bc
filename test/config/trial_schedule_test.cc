// TrialSchedule: lengths and periods in batches, records and epochs turned into batches, and the
// Due functions the trial loop asks.
#include "runtime/config/trial_schedule.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Length Batches(uint64_t n) { return {LengthUnit::kBatches, n}; }
Length Records(uint64_t n) { return {LengthUnit::kRecords, n}; }
Length Epochs(uint64_t n) { return {LengthUnit::kEpochs, n}; }

ExperimentConfig Config(Length max_length, uint64_t global_batch_size = 32) {
  ExperimentConfig config;
  config.global_batch_size = global_batch_size;
  config.searcher.metric = "loss";
  config.searcher.max_length = max_length;
  return config;
}

TEST(LengthInBatchesTest, Batches) {
  EXPECT_EQ(LengthInBatches(Batches(7), 32, 1000), 7u);
  EXPECT_EQ(LengthInBatches(Batches(0), 32, 1000), 0u);
}

TEST(LengthInBatchesTest, RecordsRoundUp) {
  EXPECT_EQ(LengthInBatches(Records(64), 32, 1000), 2u);
  EXPECT_EQ(LengthInBatches(Records(65), 32, 1000), 3u);
  EXPECT_EQ(LengthInBatches(Records(1), 32, 1000), 1u);
  EXPECT_EQ(LengthInBatches(Records(0), 32, 1000), 0u);
}

TEST(LengthInBatchesTest, EpochsRoundUp) {
  EXPECT_EQ(LengthInBatches(Epochs(1), 32, 320), 10u);
  EXPECT_EQ(LengthInBatches(Epochs(1), 32, 321), 11u);
  // The rounding applies to the whole length, not per epoch: 3 * 100 / 32 = 9.375 -> 10, not 12.
  EXPECT_EQ(LengthInBatches(Epochs(3), 32, 100), 10u);
}

TEST(MakeTrialScheduleTest, CopiesTheLoopSettings) {
  ExperimentConfig config = Config(Batches(500));
  config.scheduling_unit = 25;
  config.optimizations.aggregation_frequency = 4;
  config.perform_initial_validation = true;
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 60000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 500u);
  EXPECT_EQ(schedule->report_period, 25u);
  EXPECT_EQ(schedule->aggregation_frequency, 4u);
  EXPECT_TRUE(schedule->initial_validation);
  EXPECT_EQ(schedule->validation_period, 0u) << "no period given: only at the end";
  EXPECT_EQ(schedule->checkpoint_period, 0u);
}

TEST(MakeTrialScheduleTest, PeriodsInEveryUnit) {
  ExperimentConfig config = Config(Epochs(2), 32);
  config.min_validation_period = Records(100);  // ceil(100 / 32) = 4
  config.min_checkpoint_period = Epochs(1);     // ceil(1000 / 32) = 32
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 1000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 63u);  // ceil(2000 / 32)
  EXPECT_EQ(schedule->validation_period, 4u);
  EXPECT_EQ(schedule->checkpoint_period, 32u);
}

TEST(MakeTrialScheduleTest, ZeroPeriodMeansOnlyAtTheEnd) {
  ExperimentConfig config = Config(Batches(10));
  config.min_validation_period = Batches(0);
  config.min_checkpoint_period = Records(0);
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 1000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->validation_period, 0u);
  EXPECT_EQ(schedule->checkpoint_period, 0u);
  for (uint64_t b = 1; b < 10; ++b) {
    EXPECT_FALSE(schedule->ValidationDue(b - 1, b)) << b;
    EXPECT_FALSE(schedule->CheckpointDue(b - 1, b)) << b;
  }
  EXPECT_TRUE(schedule->ValidationDue(9, 10));
  EXPECT_TRUE(schedule->CheckpointDue(9, 10));
}

TEST(MakeTrialScheduleTest, AnEpochOfSlotsThatDropRecordsStillTrainsEveryRecord) {
  // 33 records over 2 slots: each trains 16, so a batch holds 32 and an epoch of 60000 records
  // takes 1875 batches (1819 batches of 32 would leave 1792 records untrained).
  ExperimentConfig config = Config(Epochs(1), 33);
  config.slots_per_trial = 2;
  config.min_validation_period = Records(6400);  // 200 batches of 32
  config.min_checkpoint_period = Epochs(1);
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 60000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 1875u);
  EXPECT_EQ(schedule->validation_period, 200u);
  EXPECT_EQ(schedule->checkpoint_period, 1875u);
  // Batches stay batches.
  config.searcher.max_length = Batches(1000);
  schedule = MakeTrialSchedule(config, 60000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 1000u);
}

TEST(MakeTrialScheduleTest, RecordsPerBatchDropsOnlyWhatTheSlotsCannotSplit) {
  EXPECT_EQ(RecordsPerBatch(33, 1), 33u);
  EXPECT_EQ(RecordsPerBatch(33, 2), 32u);
  EXPECT_EQ(RecordsPerBatch(33, 4), 32u);
  EXPECT_EQ(RecordsPerBatch(33, 3), 33u);
  EXPECT_EQ(RecordsPerBatch(64, 8), 64u);
  EXPECT_EQ(RecordsPerBatch(7, 16), 7u);  // fewer records than slots: refused elsewhere
}

TEST(MakeTrialScheduleTest, RecordsPerEpochFromTheConfigWins) {
  ExperimentConfig config = Config(Epochs(1), 10);
  config.records_per_epoch = 50;
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 1000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 5u);
}

TEST(MakeTrialScheduleTest, RecordsPerEpochFallsBackToTheDatasetSize) {
  ExperimentConfig config = Config(Epochs(1), 10);
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 1000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 100u);
}

TEST(MakeTrialScheduleTest, ZeroLengthIsAnErrorNamingSearcherMaxLength) {
  for (const Length& length : {Batches(0), Records(0), Epochs(0)}) {
    absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(Config(length), 1000);
    ASSERT_FALSE(schedule.ok()) << DescribeLength(length);
    EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(schedule.status().message()), HasSubstr("searcher.max_length"));
    EXPECT_THAT(std::string(schedule.status().message()), HasSubstr(DescribeLength(length)));
  }
}

// 2^40 epochs of 2^40 records: 2^80 records, which used to wrap to "0 batches".
TEST(LengthInBatchesTest, OverflowSaturatesInsteadOfWrapping) {
  const uint64_t big = uint64_t{1} << 40;
  EXPECT_EQ(LengthInBatches(Epochs(big), 32, big), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(LengthInBatches(Records(std::numeric_limits<uint64_t>::max()), 32, 0),
            std::numeric_limits<uint64_t>::max() / 32 + 1);
}

TEST(MakeTrialScheduleTest, ALengthPastTheBoundIsAnErrorNamingIt) {
  const uint64_t big = uint64_t{1} << 40;
  ExperimentConfig config = Config(Epochs(big));
  config.records_per_epoch = big;
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(config, 1000);
  ASSERT_FALSE(schedule.ok());
  EXPECT_THAT(std::string(schedule.status().message()),
              HasSubstr("searcher.max_length: 1099511627776 epochs comes to more than "
                        "281474976710656 batches, the most a trial trains"));
}

TEST(MakeTrialScheduleTest, FewRecordsStillMakeOneBatch) {
  absl::StatusOr<TrialSchedule> schedule = MakeTrialSchedule(Config(Records(5), 32), 1000);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->total_batches, 1u);
}

// The batches after which each event happens when the optimizer steps after every batch.
struct Events {
  std::vector<uint64_t> validations, checkpoints, reports, steps;
};

Events Walk(const TrialSchedule& schedule) {
  Events events;
  uint64_t last_step = 0;
  for (uint64_t b = 1; b <= schedule.total_batches; ++b) {
    if (!schedule.StepDue(b)) continue;
    events.steps.push_back(b);
    if (schedule.ValidationDue(last_step, b)) events.validations.push_back(b);
    if (schedule.CheckpointDue(last_step, b)) events.checkpoints.push_back(b);
    if (schedule.ReportDue(last_step, b)) events.reports.push_back(b);
    last_step = b;
  }
  return events;
}

TEST(TrialScheduleTest, DueEveryPeriodAndAtTheEnd) {
  TrialSchedule schedule;
  schedule.total_batches = 23;
  schedule.validation_period = 10;
  schedule.checkpoint_period = 7;
  schedule.report_period = 5;
  const Events events = Walk(schedule);
  EXPECT_EQ(events.steps.size(), 23u);
  EXPECT_THAT(events.validations, ElementsAre(10, 20, 23));
  EXPECT_THAT(events.checkpoints, ElementsAre(7, 14, 21, 23));
  EXPECT_THAT(events.reports, ElementsAre(5, 10, 15, 20, 23));
}

// With steps every 3 batches, an event falls due at the first step at or after each multiple of
// its period.
TEST(TrialScheduleTest, PeriodsOffTheAggregationWindowFireAtTheNextStep) {
  TrialSchedule schedule;
  schedule.total_batches = 23;
  schedule.validation_period = 10;
  schedule.checkpoint_period = 7;
  schedule.report_period = 5;
  schedule.aggregation_frequency = 3;
  const Events events = Walk(schedule);
  EXPECT_THAT(events.steps, ElementsAre(3, 6, 9, 12, 15, 18, 21, 23));
  EXPECT_THAT(events.validations, ElementsAre(12, 21, 23));
  EXPECT_THAT(events.checkpoints, ElementsAre(9, 15, 21, 23));
  EXPECT_THAT(events.reports, ElementsAre(6, 12, 15, 21, 23));
}

TEST(TrialScheduleTest, DueWhenAMultipleLiesInTheStep) {
  TrialSchedule schedule;
  schedule.total_batches = 100;
  schedule.validation_period = 10;
  EXPECT_TRUE(schedule.ValidationDue(9, 10));
  EXPECT_TRUE(schedule.ValidationDue(8, 12));
  EXPECT_FALSE(schedule.ValidationDue(10, 12)) << "10 was already due in the previous step";
  EXPECT_FALSE(schedule.ValidationDue(11, 19));
  EXPECT_TRUE(schedule.ValidationDue(19, 20));
  EXPECT_TRUE(schedule.ValidationDue(98, 100));
  EXPECT_TRUE(schedule.ValidationDue(99, 100)) << "the end";
}

TEST(TrialScheduleTest, StepEveryBatchWithoutAggregation) {
  TrialSchedule schedule;
  schedule.total_batches = 4;
  for (uint64_t b = 1; b <= 4; ++b) EXPECT_TRUE(schedule.StepDue(b)) << b;
}

TEST(TrialScheduleTest, StepAfterEveryKBatchesAndAtTheEnd) {
  TrialSchedule schedule;
  schedule.total_batches = 10;
  schedule.aggregation_frequency = 4;
  std::vector<uint64_t> steps;
  for (uint64_t b = 1; b <= 10; ++b) {
    if (schedule.StepDue(b)) steps.push_back(b);
  }
  EXPECT_THAT(steps, ElementsAre(4, 8, 10));
}

// StepsAfter counts what StepDue says, from any point.
TEST(TrialScheduleTest, StepsAfterCountsTheStepsLeft) {
  TrialSchedule schedule;
  for (const uint32_t window : {1u, 3u, 4u}) {
    for (const uint64_t total : {1u, 9u, 10u, 12u}) {
      schedule.aggregation_frequency = window;
      schedule.total_batches = total;
      for (uint64_t from = 0; from <= total + 1; ++from) {
        uint64_t due = 0;
        for (uint64_t b = from + 1; b <= total; ++b) due += schedule.StepDue(b) ? 1 : 0;
        EXPECT_EQ(schedule.StepsAfter(from), due) << window << " " << total << " " << from;
      }
    }
  }
}

TEST(TrialScheduleTest, NotesTheLengthsAnAggregationWindowMoves) {
  TrialSchedule schedule;
  schedule.total_batches = 102;
  schedule.validation_period = 50;
  schedule.checkpoint_period = 100;
  EXPECT_TRUE(AggregationWindowNotes(schedule, "searcher.max_length").empty()) << "no window";
  schedule.aggregation_frequency = 4;
  EXPECT_THAT(
      AggregationWindowNotes(schedule, "searcher.max_length"),
      ElementsAre(HasSubstr("searcher.max_length comes to 102 batches, not a multiple of "
                            "optimizations.aggregation_frequency 4: a trial's last optimizer step "
                            "sums the 2 batches left"),
                  HasSubstr("min_validation_period comes to 50 batches, not a multiple of "
                            "optimizations.aggregation_frequency 4: each falls at the end of the "
                            "window it falls due in (the first at batch 52)")));
  schedule.total_batches = 104;
  schedule.validation_period = 52;
  EXPECT_TRUE(AggregationWindowNotes(schedule, "searcher.max_length").empty())
      << "every length a multiple of 4";
  // A period that never falls due before the end is no note (the end is a step anyway), and
  // a length of one leftover batch says "batch".
  schedule.total_batches = 101;
  schedule.validation_period = 2500;
  schedule.checkpoint_period = 101;
  EXPECT_THAT(AggregationWindowNotes(schedule, "searcher.max_time"),
              ElementsAre(AllOf(HasSubstr("searcher.max_time comes to 101 batches"),
                                HasSubstr("sums the 1 batch left, and"))));
}

TEST(ShortEpochNoteTest, AnEpochShorterThanABatchIsNamedWhereALengthIsInEpochs) {
  ExperimentConfig config = Config(Epochs(1));
  EXPECT_EQ(ShortEpochNote(config), std::nullopt) << "the plugin's dataset size";
  config.records_per_epoch = 10;
  EXPECT_EQ(ShortEpochNote(config),
            "records_per_epoch 10 is fewer than one batch trains (32 records): lengths in epochs "
            "(searcher.max_length) count epochs times 10 records, rounded up to whole batches "
            "of 32, so 1 epoch trains 32 records");
  // Each key in epochs is named; with none in epochs there is nothing to say.
  config.min_validation_period = Epochs(2);
  EXPECT_THAT(ShortEpochNote(config).value_or(""),
              HasSubstr("(searcher.max_length, min_validation_period)"));
  config.searcher.max_length = Batches(10);
  config.min_validation_period = Records(5);
  EXPECT_EQ(ShortEpochNote(config), std::nullopt);
  // A whole batch's records per epoch, or more: no note (33 at 2 slots trains 32 a batch).
  config = Config(Epochs(1), 33);
  config.slots_per_trial = 2;
  config.records_per_epoch = 32;
  EXPECT_EQ(ShortEpochNote(config), std::nullopt);
}

}  // namespace
}  // namespace cohort
