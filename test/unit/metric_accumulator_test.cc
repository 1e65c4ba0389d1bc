// MetricAccumulator, AccumulateValidation and FindMetric: each reduction over several batches,
// zero-record batches, a reduction that changes, a validation batch that reports other metrics
// than the first (said), and Determined's "validation_" prefix.
#include "runtime/plugin/metric_accumulator.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Entry {
  std::string name;
  double value;
  uint64_t records;
  cohort_reduction reduction = COHORT_REDUCE_MEAN;
};

BatchMetrics Batch(const std::vector<Entry>& entries) {
  BatchMetrics batch;
  for (const Entry& e : entries) {
    EXPECT_TRUE(batch.Add(e.name, e.value, e.records, e.reduction).ok()) << e.name;
  }
  return batch;
}

// The value of `name` in `metrics`; fails the test when absent.
double ValueOf(const std::vector<ReducedMetric>& metrics, const std::string& name) {
  const ReducedMetric* metric = FindMetric(metrics, name);
  EXPECT_NE(metric, nullptr) << name;
  return metric == nullptr ? 0 : metric->value;
}

TEST(MetricAccumulatorTest, MeanIsWeightedByRecords) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"loss", 1.0, 2}})).ok());
  ASSERT_TRUE(total.Add(Batch({{"loss", 4.0, 6}})).ok());
  // (1*2 + 4*6) / 8 = 26 / 8; an unweighted mean would be 2.5.
  EXPECT_DOUBLE_EQ(ValueOf(total.Result(), "loss"), 3.25);
  EXPECT_EQ(total.batches(), 2u);
}

TEST(MetricAccumulatorTest, SumMinMax) {
  MetricAccumulator total;
  ASSERT_TRUE(total
                  .Add(Batch({{"correct", 3, 4, COHORT_REDUCE_SUM},
                              {"lowest", 0.5, 4, COHORT_REDUCE_MIN},
                              {"highest", -2, 4, COHORT_REDUCE_MAX}}))
                  .ok());
  ASSERT_TRUE(total
                  .Add(Batch({{"correct", 5, 4, COHORT_REDUCE_SUM},
                              {"lowest", -1.5, 4, COHORT_REDUCE_MIN},
                              {"highest", -3, 4, COHORT_REDUCE_MAX}}))
                  .ok());
  ASSERT_TRUE(total
                  .Add(Batch({{"correct", 1, 1, COHORT_REDUCE_SUM},
                              {"lowest", 2, 1, COHORT_REDUCE_MIN},
                              {"highest", -2.5, 1, COHORT_REDUCE_MAX}}))
                  .ok());
  const std::vector<ReducedMetric> result = total.Result();
  EXPECT_DOUBLE_EQ(ValueOf(result, "correct"), 9);
  EXPECT_DOUBLE_EQ(ValueOf(result, "lowest"), -1.5);
  EXPECT_DOUBLE_EQ(ValueOf(result, "highest"), -2);
}

TEST(MetricAccumulatorTest, ResultKeepsFirstSeenOrder) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"b", 1, 1}, {"a", 2, 1}})).ok());
  ASSERT_TRUE(total.Add(Batch({{"c", 3, 1}, {"a", 2, 1}})).ok());
  const std::vector<ReducedMetric> result = total.Result();
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0].name, "b");
  EXPECT_EQ(result[1].name, "a");
  EXPECT_EQ(result[2].name, "c");
}

// A rank with no share of the last validation batch reports its metrics with zero records: they
// must not pull a mean towards their (meaningless) value.
TEST(MetricAccumulatorTest, PackedNumbersFollowTheNamesWhateverTheOrderSeen) {
  MetricAccumulator first;
  ASSERT_TRUE(first.Add(Batch({{"loss", 1.0, 4}, {"accuracy", 0.5, 4}})).ok());
  MetricAccumulator second;
  ASSERT_TRUE(second.Add(Batch({{"accuracy", 0.75, 4}, {"loss", 3.0, 4}})).ok());
  EXPECT_EQ(first.Names(), second.Names());
  ASSERT_TRUE(first.MergePacked(second.Packed()).ok());
  EXPECT_EQ(ValueOf(first.Result(), "loss"), 2.0);
  EXPECT_EQ(ValueOf(first.Result(), "accuracy"), 0.625);
  EXPECT_EQ(first.Result()[0].name, "loss") << "the result keeps the order first seen";

  MetricAccumulator other;
  ASSERT_TRUE(other.Add(Batch({{"loss", 1.0, 4}, {"acc", 0.5, 4}})).ok());
  EXPECT_NE(other.Names(), first.Names());
}

TEST(MetricAccumulatorTest, ZeroRecordBatchesDoNotMoveAMean) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"loss", 2.0, 3}})).ok());
  ASSERT_TRUE(total.Add(Batch({{"loss", 0.0, 0}})).ok());
  ASSERT_TRUE(total.Add(Batch({{"loss", 4.0, 1}})).ok());
  EXPECT_DOUBLE_EQ(ValueOf(total.Result(), "loss"), 2.5);  // (2*3 + 4*1) / 4
  EXPECT_EQ(total.batches(), 3u);
}

TEST(MetricAccumulatorTest, MetricsWithOnlyZeroRecordBatchesAreLeftOut) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"loss", 0.0, 0}, {"seen", 7, 0, COHORT_REDUCE_SUM}})).ok());
  ASSERT_TRUE(total.Add(Batch({{"loss", 0.0, 0}, {"seen", 1, 0, COHORT_REDUCE_SUM}})).ok());
  const std::vector<ReducedMetric> result = total.Result();
  EXPECT_EQ(FindMetric(result, "loss"), nullptr);
  EXPECT_EQ(FindMetric(result, "seen"), nullptr);
}

TEST(MetricAccumulatorTest, ZeroRecordMetricsAreNamedAndPackedWithNoRecords) {
  MetricAccumulator empty;
  ASSERT_TRUE(empty.Add(Batch({{"loss", 0.0, 0}, {"low", 0, 0, COHORT_REDUCE_MIN}})).ok());
  EXPECT_EQ(empty.Names(), (std::vector<std::string>{"loss", "low"}));
  EXPECT_EQ(empty.Packed(),
            (std::vector<double>{COHORT_REDUCE_MEAN, 0, 0, COHORT_REDUCE_MIN, 0, 0}));
  EXPECT_TRUE(empty.Result().empty());

  // Folding values into the empty one takes them; folding the empty one in moves nothing.
  MetricAccumulator full;
  ASSERT_TRUE(full.Add(Batch({{"loss", 2.0, 4}, {"low", 5, 4, COHORT_REDUCE_MIN}})).ok());
  MetricAccumulator taken = empty;
  ASSERT_TRUE(taken.MergePacked(full.Packed()).ok());
  EXPECT_DOUBLE_EQ(ValueOf(taken.Result(), "loss"), 2.0);
  EXPECT_DOUBLE_EQ(ValueOf(taken.Result(), "low"), 5.0);
  ASSERT_TRUE(full.MergePacked(empty.Packed()).ok());
  EXPECT_DOUBLE_EQ(ValueOf(full.Result(), "loss"), 2.0);
  EXPECT_DOUBLE_EQ(ValueOf(full.Result(), "low"), 5.0);
}

TEST(MetricAccumulatorTest, ZeroRecordBatchesDoNotMoveMinMaxOrSum) {
  MetricAccumulator total;
  ASSERT_TRUE(total
                  .Add(Batch({{"low", 3, 2, COHORT_REDUCE_MIN},
                              {"high", 3, 2, COHORT_REDUCE_MAX},
                              {"count", 5, 2, COHORT_REDUCE_SUM}}))
                  .ok());
  // An empty share of the last batch reports zeros; none of them may count.
  ASSERT_TRUE(total
                  .Add(Batch({{"low", 0, 0, COHORT_REDUCE_MIN},
                              {"high", 9, 0, COHORT_REDUCE_MAX},
                              {"count", 4, 0, COHORT_REDUCE_SUM}}))
                  .ok());
  const std::vector<ReducedMetric> result = total.Result();
  EXPECT_DOUBLE_EQ(ValueOf(result, "low"), 3);
  EXPECT_DOUBLE_EQ(ValueOf(result, "high"), 3);
  EXPECT_DOUBLE_EQ(ValueOf(result, "count"), 5);
}

TEST(MetricAccumulatorTest, NothingAddedGivesNothing) {
  MetricAccumulator total;
  EXPECT_THAT(total.Result(), IsEmpty());
  EXPECT_EQ(total.batches(), 0u);
}

TEST(MetricAccumulatorTest, ChangingReductionIsAnErrorNamingTheMetric) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"accuracy", 0.5, 2}})).ok());
  const absl::Status status = total.Add(Batch({{"accuracy", 0.5, 2, COHORT_REDUCE_MAX}}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("accuracy"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("reduction"));
}

TEST(MetricAccumulatorTest, ResetForgetsEverything) {
  MetricAccumulator total;
  ASSERT_TRUE(total.Add(Batch({{"loss", 10.0, 5}})).ok());
  total.Reset();
  EXPECT_THAT(total.Result(), IsEmpty());
  EXPECT_EQ(total.batches(), 0u);
  // The reduction is forgotten too.
  ASSERT_TRUE(total.Add(Batch({{"loss", 1.0, 1, COHORT_REDUCE_MIN}})).ok());
  EXPECT_DOUBLE_EQ(ValueOf(total.Result(), "loss"), 1.0);
}

// A validation batch that reports other names than the first, or none, is said (a metric it
// left out is over the other batches' records alone, which used to pass in silence); its
// metrics still combine as they are.
TEST(AccumulateValidationTest, ABatchReportingOtherMetricsThanTheFirstIsSaid) {
  std::optional<std::string> uneven;
  absl::StatusOr<MetricAccumulator> total = AccumulateValidation(
      {Batch({{"loss", 1, 2}, {"accuracy", 0.5, 2}}), Batch({{"accuracy", 1, 2}, {"loss", 3, 2}})},
      &uneven);
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(uneven, std::nullopt) << "the same names in another order";
  EXPECT_EQ(ValueOf(total->Result(), "loss"), 2);
  EXPECT_EQ(ValueOf(total->Result(), "accuracy"), 0.75);

  const BatchMetrics both = Batch({{"loss", 1, 2}, {"accuracy", 0.5, 2}});
  total = AccumulateValidation({both, both, Batch({{"loss", 3, 2}})}, &uneven);
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(uneven,
            "evaluate_batch reported loss for validation batch 3 of 3, but accuracy, loss for the "
            "first: a metric a batch leaves out is over the other batches' records alone (an "
            "empty batch reports its metrics with record count 0)");
  EXPECT_EQ(ValueOf(total->Result(), "accuracy"), 0.5);
  uneven.reset();
  ASSERT_TRUE(AccumulateValidation({both, BatchMetrics{}, Batch({{"loss", 1, 2}})}, &uneven).ok());
  EXPECT_THAT(uneven.value_or(""), HasSubstr("reported no metrics for validation batch 2 of 3"));
}

TEST(FindMetricTest, ExactNameAndValidationPrefix) {
  const std::vector<ReducedMetric> metrics = {{"loss", 0.25}, {"accuracy", 0.75}};
  ASSERT_NE(FindMetric(metrics, "loss"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "loss")->value, 0.25);
  ASSERT_NE(FindMetric(metrics, "validation_loss"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "validation_loss")->value, 0.25);
  ASSERT_NE(FindMetric(metrics, "validation_accuracy"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "validation_accuracy")->value, 0.75);
  EXPECT_EQ(FindMetric(metrics, "error"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "validation_"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "training_loss"), nullptr);

  const std::vector<std::string> names = MetricNames(metrics);
  EXPECT_EQ(names, (std::vector<std::string>{"loss", "accuracy"}));
  EXPECT_TRUE(NamesMetric(names, "validation_accuracy"));
  EXPECT_TRUE(NamesMetric(names, "loss"));
  EXPECT_FALSE(NamesMetric(names, "validation_"));
  EXPECT_FALSE(NamesMetric({}, "loss"));
}

TEST(FindMetricTest, AnExactMatchWinsOverThePrefix) {
  const std::vector<ReducedMetric> metrics = {{"loss", 1}, {"validation_loss", 2}};
  ASSERT_NE(FindMetric(metrics, "validation_loss"), nullptr);
  EXPECT_EQ(FindMetric(metrics, "validation_loss")->value, 2);
}

}  // namespace
}  // namespace cohort
