// synthetic_dataset_test.cc -- SyntheticDataset is deterministic, splits do not share records, and
// the labels use every class without one of them dominating.
#include "synthetic_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mlp {
namespace {

constexpr size_t kDim = 32;
constexpr size_t kClasses = 10;

struct Record {
  std::vector<float> features;
  int32_t label;
};

Record ReadRecord(const SyntheticDataset& data, uint64_t index) {
  Record r{std::vector<float>(data.input_size()), 0};
  r.label = data.Read(index, r.features.data());
  return r;
}

TEST(SyntheticDatasetTest, ReportsItsShape) {
  SyntheticDataset data(COHORT_SPLIT_TRAINING, 1234, kDim, kClasses);
  EXPECT_EQ(data.size(), 1234u);
  EXPECT_EQ(data.input_size(), kDim);
  EXPECT_EQ(data.class_count(), kClasses);
}

TEST(SyntheticDatasetTest, SameRecordGivesSameFeaturesAndLabel) {
  SyntheticDataset a(COHORT_SPLIT_TRAINING, 60000, kDim, kClasses);
  SyntheticDataset b(COHORT_SPLIT_TRAINING, 60000, kDim, kClasses);
  for (uint64_t index : {0u, 1u, 4321u, 59999u}) {
    const Record first = ReadRecord(a, index);
    const Record again = ReadRecord(a, index);
    const Record other_instance = ReadRecord(b, index);
    EXPECT_EQ(first.features, again.features);
    EXPECT_EQ(first.features, other_instance.features);
    EXPECT_EQ(first.label, again.label);
    EXPECT_EQ(first.label, other_instance.label);
  }
}

TEST(SyntheticDatasetTest, RecordsDoNotDependOnTheSplitSize) {
  SyntheticDataset small(COHORT_SPLIT_VALIDATION, 10, kDim, kClasses);
  SyntheticDataset large(COHORT_SPLIT_VALIDATION, 10000, kDim, kClasses);
  EXPECT_EQ(ReadRecord(small, 7).features, ReadRecord(large, 7).features);
}

TEST(SyntheticDatasetTest, FeaturesAreInUnitRangeAndVary) {
  SyntheticDataset data(COHORT_SPLIT_TRAINING, 100, kDim, kClasses);
  std::vector<float> all;
  for (uint64_t i = 0; i < data.size(); ++i) {
    const Record r = ReadRecord(data, i);
    all.insert(all.end(), r.features.begin(), r.features.end());
  }
  EXPECT_THAT(all, ::testing::Each(::testing::AllOf(::testing::Ge(-1.0f), ::testing::Le(1.0f))));
  EXPECT_LT(*std::min_element(all.begin(), all.end()), -0.99f);
  EXPECT_GT(*std::max_element(all.begin(), all.end()), 0.99f);
}

TEST(SyntheticDatasetTest, TrainingAndValidationRecordsDiffer) {
  SyntheticDataset train(COHORT_SPLIT_TRAINING, 1000, kDim, kClasses);
  SyntheticDataset validation(COHORT_SPLIT_VALIDATION, 1000, kDim, kClasses);
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_NE(ReadRecord(train, i).features, ReadRecord(validation, i).features) << "record " << i;
  }
  // Nor at different positions: no feature vector of one split appears in the other.
  std::vector<std::vector<float>> seen;
  for (uint64_t i = 0; i < 200; ++i) seen.push_back(ReadRecord(train, i).features);
  for (uint64_t i = 0; i < 200; ++i) {
    EXPECT_THAT(seen, ::testing::Not(::testing::Contains(ReadRecord(validation, i).features)));
  }
}

TEST(SyntheticDatasetTest, LabelsCoverEveryClassWithoutOneDominating) {
  for (cohort_split split : {COHORT_SPLIT_TRAINING, COHORT_SPLIT_VALIDATION}) {
    SyntheticDataset data(split, 5000, kDim, kClasses);
    std::vector<size_t> count(kClasses);
    for (uint64_t i = 0; i < data.size(); ++i) {
      const int32_t label = ReadRecord(data, i).label;
      ASSERT_GE(label, 0);
      ASSERT_LT(label, static_cast<int32_t>(kClasses));
      ++count[static_cast<size_t>(label)];
    }
    EXPECT_THAT(count, ::testing::Each(::testing::Gt(0u)));
    EXPECT_LT(*std::max_element(count.begin(), count.end()), data.size() / 4);
  }
}

TEST(SyntheticDatasetTest, OtherShapesWork) {
  SyntheticDataset data(COHORT_SPLIT_TRAINING, 2000, 3, 2);
  std::vector<size_t> count(2);
  for (uint64_t i = 0; i < data.size(); ++i) {
    ++count[static_cast<size_t>(ReadRecord(data, i).label)];
  }
  EXPECT_GT(count[0], 0u);
  EXPECT_GT(count[1], 0u);
}

TEST(SyntheticDatasetTest, RejectsImpossibleShapes) {
  EXPECT_THROW(SyntheticDataset(COHORT_SPLIT_TRAINING, 10, 0, 10), std::invalid_argument);
  EXPECT_THROW(SyntheticDataset(COHORT_SPLIT_TRAINING, 10, 4, 1), std::invalid_argument);
  EXPECT_THROW(SyntheticDataset(7, 10, 4, 10), std::invalid_argument);
}

}  // namespace
}  // namespace mlp
