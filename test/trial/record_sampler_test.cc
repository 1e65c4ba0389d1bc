// RecordSampler and ShuffledIndices: permutations, determinism, slot-count independence, epoch
// boundaries and validation coverage.
#include "runtime/trial/record_sampler.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> values(n);
  std::iota(values.begin(), values.end(), uint64_t{0});
  return values;
}

std::vector<uint64_t> Sorted(std::vector<uint64_t> values) {
  std::sort(values.begin(), values.end());
  return values;
}

// Global batch t as the ranks of a `size`-slot trial see it, their slices in rank order.
std::vector<uint64_t> GlobalTrainingBatch(uint64_t dataset_size, uint64_t seed,
                                          uint64_t global_batch_size, uint32_t size, uint64_t t) {
  std::vector<uint64_t> records;
  for (uint32_t rank = 0; rank < size; ++rank) {
    RecordSampler sampler(dataset_size, seed, global_batch_size, rank, size);
    const BatchSpec batch = sampler.TrainingBatch(t);
    records.insert(records.end(), batch.record_indices.begin(), batch.record_indices.end());
  }
  return records;
}

TEST(ShuffledIndicesTest, EveryEpochIsAPermutation) {
  for (uint64_t n : {1, 2, 3, 7, 64, 1000}) {
    for (uint64_t epoch : {0, 1, 2, 17}) {
      EXPECT_EQ(Sorted(ShuffledIndices(n, 42, epoch)), Iota(n)) << "n " << n << " epoch " << epoch;
    }
  }
}

TEST(ShuffledIndicesTest, SameSeedAndEpochGiveTheSameOrder) {
  EXPECT_EQ(ShuffledIndices(500, 9, 3), ShuffledIndices(500, 9, 3));
}

TEST(ShuffledIndicesTest, AnotherSeedOrEpochGivesAnotherOrder) {
  const std::vector<uint64_t> base = ShuffledIndices(500, 9, 3);
  EXPECT_NE(ShuffledIndices(500, 10, 3), base);
  EXPECT_NE(ShuffledIndices(500, 9, 4), base);
  EXPECT_NE(base, Iota(500)) << "the shuffle left the records in order";
}

// Pins the algorithm (Fisher-Yates over SplitMix64 seeded with MixSeeds(seed, epoch)): these
// values were computed once from the documented algorithm. A change here changes every
// experiment's batches and breaks resuming older checkpoints' runs bit for bit.
TEST(ShuffledIndicesTest, GoldenOrder) {
  const std::vector<uint64_t> order = ShuffledIndices(10, 42, 0);
  EXPECT_THAT(std::vector<uint64_t>(order.begin(), order.begin() + 8),
              ElementsAre(5, 7, 3, 1, 8, 2, 9, 4));
  EXPECT_THAT(ShuffledIndices(10, 42, 1), ElementsAre(5, 1, 8, 7, 0, 2, 3, 4, 9, 6));
}

TEST(RecordSamplerTest, BatchSizes) {
  RecordSampler even(100, 1, 32, 1, 4);
  EXPECT_EQ(even.per_slot_batch_size(), 8u);
  EXPECT_EQ(even.effective_global_batch_size(), 32u);
  // 30 / 4 rounds down: every slot takes 7, so a global batch really holds 28 records.
  RecordSampler uneven(100, 1, 30, 0, 4);
  EXPECT_EQ(uneven.per_slot_batch_size(), 7u);
  EXPECT_EQ(uneven.effective_global_batch_size(), 28u);
  EXPECT_EQ(uneven.TrainingBatch(0).record_indices.size(), 7u);
}

TEST(RecordSamplerTest, TrainingBatchFieldsAndDeterminism) {
  RecordSampler a(50, 3, 8, 0, 1);
  RecordSampler b(50, 3, 8, 0, 1);
  const BatchSpec batch = a.TrainingBatch(4);
  EXPECT_EQ(batch.split, COHORT_SPLIT_TRAINING);
  EXPECT_EQ(batch.batch_index, 4u);
  EXPECT_EQ(batch.record_indices, b.TrainingBatch(4).record_indices);
  RecordSampler other_seed(50, 4, 8, 0, 1);
  EXPECT_NE(other_seed.TrainingBatch(4).record_indices, batch.record_indices);
}

// The stream of training batches is the epochs' permutations one after the other.
TEST(RecordSamplerTest, TrainingStreamIsTheEpochsInTurn) {
  const uint64_t n = 13, seed = 5;
  RecordSampler sampler(n, seed, 4, 0, 1);
  std::vector<uint64_t> stream;
  for (uint64_t t = 0; t < 13; ++t) {  // 52 records: 4 epochs exactly
    const BatchSpec batch = sampler.TrainingBatch(t);
    stream.insert(stream.end(), batch.record_indices.begin(), batch.record_indices.end());
  }
  std::vector<uint64_t> expected;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    const std::vector<uint64_t> order = ShuffledIndices(n, seed, epoch);
    expected.insert(expected.end(), order.begin(), order.end());
  }
  EXPECT_EQ(stream, expected);
}

TEST(RecordSamplerTest, BatchStraddlingAnEpochBoundary) {
  RecordSampler sampler(10, 42, 4, 0, 1);
  const std::vector<uint64_t> epoch0 = ShuffledIndices(10, 42, 0);
  const std::vector<uint64_t> epoch1 = ShuffledIndices(10, 42, 1);
  const BatchSpec straddling = sampler.TrainingBatch(2);  // positions 8..11
  EXPECT_EQ(straddling.epoch, 0u) << "the epoch of the batch's first record";
  EXPECT_THAT(straddling.record_indices, ElementsAre(epoch0[8], epoch0[9], epoch1[0], epoch1[1]));
  const BatchSpec next = sampler.TrainingBatch(3);  // positions 12..15
  EXPECT_EQ(next.epoch, 1u);
  EXPECT_THAT(next.record_indices, ElementsAre(epoch1[2], epoch1[3], epoch1[4], epoch1[5]));
}

TEST(RecordSamplerTest, BatchLargerThanTheDatasetSpansSeveralEpochs) {
  RecordSampler sampler(3, 8, 8, 0, 1);  // positions 8..15 of epochs of 3
  std::vector<uint64_t> expected;
  for (uint64_t position = 8; position < 16; ++position) {
    expected.push_back(ShuffledIndices(3, 8, position / 3)[position % 3]);
  }
  const BatchSpec batch = sampler.TrainingBatch(1);
  EXPECT_EQ(batch.epoch, 2u);
  EXPECT_EQ(batch.record_indices, expected);
}

// The sampler's epoch cache must not leak into the result: any order of requests gives what a
// fresh sampler gives.
TEST(RecordSamplerTest, RandomAccessMatchesAFreshSampler) {
  RecordSampler reused(11, 2, 4, 0, 1);
  for (uint64_t t : {0, 9, 1, 30, 2, 3, 29, 8, 0}) {
    RecordSampler fresh(11, 2, 4, 0, 1);
    EXPECT_EQ(reused.TrainingBatch(t).record_indices, fresh.TrainingBatch(t).record_indices)
        << "batch " << t;
  }
}

// Global batch t holds the same records whatever the slot count: the ranks' slices, concatenated
// in rank order, are the one-slot batch.
TEST(RecordSamplerTest, GlobalBatchIsTheSameForOneTwoAndFourSlots) {
  const uint64_t n = 37, seed = 11, global = 8;
  for (uint64_t t = 0; t < 20; ++t) {  // 160 records: crosses four epoch boundaries
    const std::vector<uint64_t> one = GlobalTrainingBatch(n, seed, global, 1, t);
    ASSERT_EQ(one.size(), global);
    EXPECT_EQ(GlobalTrainingBatch(n, seed, global, 2, t), one) << "batch " << t;
    EXPECT_EQ(GlobalTrainingBatch(n, seed, global, 4, t), one) << "batch " << t;
  }
}

TEST(RecordSamplerTest, RankSlicesAreContiguous) {
  RecordSampler one(20, 1, 6, 0, 1);
  const std::vector<uint64_t> whole = one.TrainingBatch(5).record_indices;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    RecordSampler sampler(20, 1, 6, rank, 3);
    EXPECT_THAT(sampler.TrainingBatch(5).record_indices,
                ElementsAreArray(whole.begin() + 2 * rank, whole.begin() + 2 * rank + 2))
        << "rank " << rank;
  }
}

TEST(RecordSamplerTest, ValidationBatchesCoverEachRecordOnceAcrossRanks) {
  const uint64_t validation_size = 29;
  const uint32_t size = 4;
  std::vector<uint64_t> seen;
  for (uint32_t rank = 0; rank < size; ++rank) {
    RecordSampler sampler(100, 1, 12, rank, size);  // 3 records per slot, 12 per batch
    ASSERT_EQ(sampler.ValidationBatchCount(validation_size), 3u);
    for (uint64_t k = 0; k < 3; ++k) {
      const BatchSpec batch = sampler.ValidationBatch(validation_size, k);
      EXPECT_EQ(batch.split, COHORT_SPLIT_VALIDATION);
      EXPECT_EQ(batch.batch_index, k);
      seen.insert(seen.end(), batch.record_indices.begin(), batch.record_indices.end());
    }
  }
  EXPECT_EQ(Sorted(seen), Iota(validation_size));
}

// The last batch (records 24..28) is cut at the end: rank 0 takes 3, rank 1 the last 2, ranks 2
// and 3 none.
TEST(RecordSamplerTest, LastValidationBatchGivesSomeRanksNothing) {
  auto last = [](uint32_t rank) {
    return RecordSampler(100, 1, 12, rank, 4).ValidationBatch(29, 2).record_indices;
  };
  EXPECT_THAT(last(0), ElementsAre(24, 25, 26));
  EXPECT_THAT(last(1), ElementsAre(27, 28));
  EXPECT_THAT(last(2), IsEmpty());
  EXPECT_THAT(last(3), IsEmpty());
}

TEST(RecordSamplerTest, ValidationIsInOrderAndUnshuffled) {
  RecordSampler sampler(100, 77, 4, 0, 1);
  EXPECT_THAT(sampler.ValidationBatch(10, 1).record_indices, ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(sampler.ValidationBatch(10, 2).record_indices, ElementsAre(8, 9));
  EXPECT_EQ(sampler.ValidationBatchCount(10), 3u);
  EXPECT_EQ(sampler.ValidationBatchCount(8), 2u);
  EXPECT_EQ(sampler.ValidationBatchCount(0), 0u);
}

}  // namespace
}  // namespace cohort
