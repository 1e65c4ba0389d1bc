// TopKCompressor: k, selection with ties, error feedback exactness, Accumulate.
#include "runtime/exchange/compression/topk/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;

struct Pairs {
  std::vector<uint32_t> indices;
  std::vector<float> values;
};

Pairs Compress(TopKCompressor& topk, const std::vector<float>& grad) {
  Pairs pairs{std::vector<uint32_t>(topk.k()), std::vector<float>(topk.k())};
  topk.Compress(grad.data(), pairs.indices.data(), pairs.values.data());
  return pairs;
}

TEST(TopKCompressorTest, KIsCeilOfRatioTimesCountAtLeastOne) {
  EXPECT_EQ(TopKCompressor(1000, 0.01).k(), 10u);
  EXPECT_EQ(TopKCompressor(1001, 0.01).k(), 11u);
  EXPECT_EQ(TopKCompressor(10, 0.001).k(), 1u);
  EXPECT_EQ(TopKCompressor(10, 1.0).k(), 10u);
  EXPECT_EQ(TopKCompressor(10, 2.0).k(), 10u);
  EXPECT_EQ(TopKCompressor(10, 0.0).k(), 1u);
  EXPECT_EQ(TopKCompressor(1000, 0.01).EncodedBytes(), 80u);
}

TEST(TopKCompressorTest, SelectsLargestMagnitudesInIndexOrder) {
  TopKCompressor topk(8, 3.0 / 8);
  Pairs pairs = Compress(topk, {0.1f, -5.0f, 0.2f, 3.0f, -0.3f, 0.0f, 4.0f, 1.0f});
  EXPECT_THAT(pairs.indices, ElementsAre(1, 3, 6));
  EXPECT_THAT(pairs.values, ElementsAre(-5.0f, 3.0f, 4.0f));
  EXPECT_THAT(topk.residual(), ElementsAre(0.1f, 0.0f, 0.2f, 0.0f, -0.3f, 0.0f, 0.0f, 1.0f));
}

TEST(TopKCompressorTest, TiesGoToTheLowerIndex) {
  TopKCompressor topk(6, 0.5);
  Pairs pairs = Compress(topk, {1.0f, -2.0f, 2.0f, 1.0f, -2.0f, 2.0f});
  EXPECT_THAT(pairs.indices, ElementsAre(1, 2, 4));
  TopKCompressor all_equal(5, 0.4);
  EXPECT_THAT(Compress(all_equal, {7.0f, 7.0f, -7.0f, 7.0f, 7.0f}).indices, ElementsAre(0, 1));
}

TEST(TopKCompressorTest, NanIsAlwaysSent) {
  TopKCompressor topk(4, 0.25);
  Pairs pairs = Compress(topk, {1.0f, std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(), 2.0f});
  EXPECT_THAT(pairs.indices, ElementsAre(2));
}

TEST(TopKCompressorTest, ResidualIsFedBackIntoTheNextStep) {
  TopKCompressor topk(4, 0.25);
  EXPECT_THAT(Compress(topk, {1.0f, 0.5f, 0.0f, 0.0f}).indices, ElementsAre(0));
  // 0.5 left over plus 0.75 now beats the fresh 1.0.
  Pairs second = Compress(topk, {0.0f, 0.75f, 1.0f, 0.0f});
  EXPECT_THAT(second.indices, ElementsAre(1));
  EXPECT_THAT(second.values, ElementsAre(1.25f));
  EXPECT_THAT(topk.residual(), ElementsAre(0.0f, 0.0f, 1.0f, 0.0f));
  topk.ClearResidual();
  EXPECT_THAT(topk.residual(), Each(0.0f));
}

TEST(TopKCompressorTest, SentPlusResidualEqualsInputPlusOldResidualExactly) {
  std::mt19937 random(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const uint64_t count = 10007;
  TopKCompressor topk(count, 0.01);
  ASSERT_EQ(topk.k(), 101u);
  for (int step = 0; step < 5; ++step) {
    std::vector<float> grad(count);
    for (float& g : grad) g = normal(random);
    const std::vector<float> old_residual = topk.residual();
    Pairs pairs = Compress(topk, grad);
    std::vector<float> rebuilt = topk.residual();
    TopKCompressor::Accumulate(pairs.indices.data(), pairs.values.data(), topk.k(), rebuilt.data());
    float smallest_sent = std::numeric_limits<float>::infinity();
    for (uint64_t j = 0; j < topk.k(); ++j) {
      if (j > 0) {
        ASSERT_LT(pairs.indices[j - 1], pairs.indices[j]);
      }
      ASSERT_EQ(topk.residual()[pairs.indices[j]], 0.0f);
      smallest_sent = std::min(smallest_sent, std::fabs(pairs.values[j]));
    }
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(rebuilt[i], grad[i] + old_residual[i]) << "step " << step << " entry " << i;
      ASSERT_LE(std::fabs(topk.residual()[i]), smallest_sent);
    }
  }
}

TEST(TopKCompressorTest, AccumulateScatterAddsEveryRanksPairs) {
  std::vector<float> out(5, 0.0f);
  const uint32_t rank0_indices[] = {0, 3};
  const float rank0_values[] = {1.0f, 2.0f};
  const uint32_t rank1_indices[] = {3, 4};
  const float rank1_values[] = {0.5f, -1.0f};
  TopKCompressor::Accumulate(rank0_indices, rank0_values, 2, out.data());
  TopKCompressor::Accumulate(rank1_indices, rank1_values, 2, out.data());
  EXPECT_THAT(out, ElementsAre(1.0f, 0.0f, 0.0f, 2.5f, -1.0f));
}

}  // namespace
}  // namespace cohort
