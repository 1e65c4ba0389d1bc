// PowerSgdCompressor: which tensors compress, low-rank reproduction on one and three simulated
// ranks, orthonormal P, error feedback, uncompressed sums, determinism, Reset.
#include "runtime/exchange/compression/powersgd/powersgd_codec.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::Each;
using ::testing::Eq;

using Matrix = std::vector<float>;  // row-major

Matrix RandomMatrix(uint64_t rows, uint64_t cols, std::mt19937& random) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix m(rows * cols);
  for (float& x : m) x = normal(random);
  return m;
}

// U V^T for U rows x r and V cols x r with standard-normal entries: a rank-r matrix.
Matrix LowRankMatrix(uint64_t rows, uint64_t cols, uint64_t rank, std::mt19937& random) {
  const Matrix u = RandomMatrix(rows, rank, random);
  const Matrix v = RandomMatrix(cols, rank, random);
  Matrix m(rows * cols, 0.0f);
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint64_t k = 0; k < cols; ++k) {
      double sum = 0.0;
      for (uint64_t c = 0; c < rank; ++c) sum += double{u[i * rank + c]} * v[k * rank + c];
      m[i * cols + k] = static_cast<float>(sum);
    }
  }
  return m;
}

double MaxAbs(const std::vector<float>& values) {
  double largest = 0.0;
  for (float x : values) largest = std::max(largest, std::fabs(double{x}));
  return largest;
}

double MaxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double largest = 0.0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(double{a[i]} - b[i]));
  return largest;
}

// A sum over ranks, rank 0 first, as an allreduce-sum would leave it on every rank.
std::vector<float> SumOverRanks(const std::vector<std::vector<float>>& per_rank) {
  std::vector<float> sum = per_rank[0];
  for (size_t r = 1; r < per_rank.size(); ++r) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += per_rank[r][i];
  }
  return sum;
}

// The buffers of one step, for inspection.
struct StepBuffers {
  std::vector<std::vector<float>> first;   // per rank, as ComputeP wrote it
  std::vector<std::vector<float>> second;  // per rank, as ComputeQ wrote it
  std::vector<float> summed_first;         // after ComputeQ orthonormalized it (rank 0's copy)
  std::vector<float> summed_second;
};

// One step for every simulated rank: grads[r] goes in as rank r's (scaled) gradient and comes out
// as the decompressed sum.
StepBuffers Step(std::vector<PowerSgdCompressor>& ranks, std::vector<std::vector<float>>& grads) {
  const size_t n = ranks.size();
  StepBuffers buffers;
  buffers.first.assign(n, std::vector<float>(ranks[0].first_count()));
  buffers.second.assign(n, std::vector<float>(ranks[0].second_count()));
  for (size_t r = 0; r < n; ++r) ranks[r].ComputeP(grads[r].data(), buffers.first[r].data());
  const std::vector<float> summed_first = SumOverRanks(buffers.first);
  std::vector<std::vector<float>> first_after(n, summed_first);
  for (size_t r = 0; r < n; ++r) {
    ranks[r].ComputeQ(grads[r].data(), first_after[r].data(), buffers.second[r].data());
  }
  buffers.summed_first = first_after[0];
  buffers.summed_second = SumOverRanks(buffers.second);
  for (size_t r = 0; r < n; ++r) {
    ranks[r].Decompress(first_after[r].data(), buffers.summed_second.data(), grads[r].data());
  }
  return buffers;
}

std::vector<PowerSgdCompressor> Ranks(size_t n, const std::vector<PowerSgdTensor>& tensors,
                                      uint32_t rank, uint64_t seed) {
  return std::vector<PowerSgdCompressor>(n, PowerSgdCompressor(tensors, rank, seed));
}

TEST(PowerSgdCompressorTest, CountsForAMixedBucket) {
  const std::vector<PowerSgdTensor> tensors = {
      {0, 64, 32},     // 4 * 96 < 2048: compressed, P 4 * 64, Q 4 * 32
      {2048, 10, 1},   // a vector: uncompressed
      {2058, 8, 8},    // 4 * 16 == 64: no saving, uncompressed
      {2122, 16, 8},   // 4 * 24 < 128: compressed, P 4 * 16, Q 4 * 8
      {2250, 1, 300},  // one row: uncompressed
      {2550, 3, 100},  // 4 * 103 > 300: uncompressed
  };
  PowerSgdCompressor powersgd(tensors, 4, 1);
  EXPECT_EQ(powersgd.compressed_tensors(), 2u);
  EXPECT_EQ(powersgd.first_count(), 4u * 64 + 4 * 16 + 10 + 64 + 300 + 300);
  EXPECT_EQ(powersgd.second_count(), 4u * 32 + 4 * 8);
  EXPECT_EQ(powersgd.error().size(), 64u * 32 + 16 * 8);

  PowerSgdCompressor rank_one(tensors, 1, 1);  // now 8 x 8 and 3 x 100 also gain
  EXPECT_EQ(rank_one.compressed_tensors(), 4u);
  EXPECT_EQ(rank_one.first_count(), 64u + 8 + 16 + 3 + 10 + 300);
  EXPECT_EQ(rank_one.second_count(), 32u + 8 + 8 + 100);

  PowerSgdCompressor nothing(std::vector<PowerSgdTensor>{}, 2, 1);
  EXPECT_EQ(nothing.first_count(), 0u);
  EXPECT_EQ(nothing.second_count(), 0u);
}

TEST(PowerSgdCompressorTest, RankRMatrixIsReproducedOnOneRank) {
  std::mt19937 random(1);
  const Matrix m = LowRankMatrix(48, 40, 3, random);
  auto ranks = Ranks(1, {{0, 48, 40}}, 3, 7);
  for (int step = 0; step < 2; ++step) {
    std::vector<std::vector<float>> grads = {m};
    Step(ranks, grads);
    EXPECT_LT(MaxAbsDifference(grads[0], m), 1e-4 * MaxAbs(m)) << "step " << step;
    EXPECT_LT(MaxAbs(ranks[0].error()), 1e-4 * MaxAbs(m)) << "step " << step;
  }
}

TEST(PowerSgdCompressorTest, ThreeRanksWhoseGradientsSumToARankRMatrix) {
  std::mt19937 random(2);
  const uint64_t rows = 30, cols = 50;
  const Matrix m = LowRankMatrix(rows, cols, 2, random);
  // Full-rank parts that cancel in the sum.
  const Matrix noise_a = RandomMatrix(rows, cols, random);
  const Matrix noise_b = RandomMatrix(rows, cols, random);
  std::vector<std::vector<float>> grads(3, Matrix(rows * cols));
  for (uint64_t i = 0; i < rows * cols; ++i) {
    grads[0][i] = m[i] / 3 + noise_a[i];
    grads[1][i] = m[i] / 3 + noise_b[i];
    grads[2][i] = m[i] / 3 - noise_a[i] - noise_b[i];
  }
  const std::vector<std::vector<float>> inputs = grads;
  auto ranks = Ranks(3, {{0, rows, cols}}, 2, 3);
  Step(ranks, grads);

  EXPECT_LT(MaxAbsDifference(grads[0], m), 1e-4 * MaxAbs(m));
  EXPECT_THAT(grads[1], Eq(grads[0]));  // every rank rebuilds the same bits
  EXPECT_THAT(grads[2], Eq(grads[0]));
  // Each rank keeps what its own share missed; the shares add up to the sum, so the errors cancel
  // and the approximation plus the summed error is the summed input.
  std::vector<std::vector<float>> errors;
  for (const PowerSgdCompressor& rank : ranks) errors.push_back(rank.error());
  EXPECT_GT(MaxAbs(errors[0]), 0.1);
  EXPECT_LT(MaxAbs(SumOverRanks(errors)), 1e-4 * MaxAbs(m));
  const std::vector<float> summed_input = SumOverRanks(inputs);
  std::vector<float> rebuilt = SumOverRanks(errors);
  for (size_t i = 0; i < rebuilt.size(); ++i) rebuilt[i] += grads[0][i];
  EXPECT_LT(MaxAbsDifference(rebuilt, summed_input), 1e-5 * MaxAbs(summed_input));
}

TEST(PowerSgdCompressorTest, SummedPComesBackOrthonormal) {
  std::mt19937 random(3);
  const uint64_t rows = 40, cols = 30;
  const uint32_t rank = 4;
  std::vector<std::vector<float>> grads = {RandomMatrix(rows, cols, random),
                                           RandomMatrix(rows, cols, random)};
  auto ranks = Ranks(2, {{0, rows, cols}}, rank, 4);
  const StepBuffers buffers = Step(ranks, grads);
  const float* p = buffers.summed_first.data();
  for (uint32_t a = 0; a < rank; ++a) {
    for (uint32_t b = 0; b < rank; ++b) {
      double dot = 0.0;
      for (uint64_t i = 0; i < rows; ++i) dot += double{p[a * rows + i]} * p[b * rows + i];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << ", " << b;
    }
  }
}

TEST(PowerSgdCompressorTest, OneRankGradientPlusErrorIsTheInput) {
  std::mt19937 random(4);
  const uint64_t rows = 24, cols = 20;
  auto ranks = Ranks(1, {{0, rows, cols}}, 2, 5);
  std::vector<float> previous_error(rows * cols, 0.0f);
  for (int step = 0; step < 5; ++step) {
    const Matrix gradient = RandomMatrix(rows, cols, random);
    std::vector<std::vector<float>> grads = {gradient};
    Step(ranks, grads);
    const std::vector<float>& error = ranks[0].error();
    EXPECT_GT(MaxAbs(error), 0.1);  // a random matrix is far from rank 2
    for (uint64_t i = 0; i < rows * cols; ++i) {
      const float m = gradient[i] + previous_error[i];  // the M that went in
      ASSERT_NEAR(grads[0][i] + error[i], m, 1e-5f * (1.0f + std::fabs(m)))
          << "step " << step << " entry " << i;
    }
    previous_error = error;
  }
}

TEST(PowerSgdCompressorTest, ErrorFeedbackDeliversTheRunningSumOfAFixedGradient) {
  std::mt19937 random(5);
  const uint64_t rows = 20, cols = 16;
  const Matrix gradient = RandomMatrix(rows, cols, random);
  auto ranks = Ranks(1, {{0, rows, cols}}, 1, 6);
  std::vector<double> delivered(rows * cols, 0.0);
  double gradient_norm = 0.0;
  for (float g : gradient) gradient_norm += double{g} * g;
  gradient_norm = std::sqrt(gradient_norm);
  // || sum of approximations - steps * gradient || / || steps * gradient ||
  auto relative_gap = [&](int steps) {
    double gap = 0.0;
    for (uint64_t i = 0; i < rows * cols; ++i) {
      const double d = delivered[i] - steps * double{gradient[i]};
      gap += d * d;
    }
    return std::sqrt(gap) / (steps * gradient_norm);
  };
  auto pending_norm = [&] {
    double norm = 0.0;
    for (float e : ranks[0].error()) norm += double{e} * e;
    return std::sqrt(norm) / gradient_norm;
  };
  double first_gap = 0.0;
  double gap_at_20 = 0.0;
  double pending_at_200 = 0.0;
  for (int step = 1; step <= 400; ++step) {
    std::vector<std::vector<float>> grads = {gradient};
    Step(ranks, grads);
    for (uint64_t i = 0; i < rows * cols; ++i) delivered[i] += grads[0][i];
    if (step == 1) first_gap = relative_gap(step);
    if (step == 20) gap_at_20 = relative_gap(step);
    if (step == 200) pending_at_200 = pending_norm();
  }
  // One rank-1 step leaves most of a random matrix behind; without error feedback every step
  // would leave the same share behind. With it, only what is still pending is missing, and that
  // stays bounded (here about nine gradients' worth), so the gap shrinks like 1 / steps.
  EXPECT_GT(first_gap, 0.5);
  EXPECT_LT(gap_at_20, first_gap);
  EXPECT_LT(relative_gap(400), 0.1 * gap_at_20);
  EXPECT_LT(relative_gap(400), 0.04);
  EXPECT_LT(pending_at_200, 12.0);
  EXPECT_LT(pending_norm(), 12.0);
  // Exactly so: delivered + pending error = everything that went in.
  for (uint64_t i = 0; i < rows * cols; ++i) {
    EXPECT_NEAR(delivered[i] + ranks[0].error()[i], 400.0 * gradient[i], 1e-3);
  }
}

TEST(PowerSgdCompressorTest, SmallTensorsAndVectorsArriveAsTheExactSum) {
  // A vector, a 2 x 2 and a 3 x 3 (no saving at rank 2), a single row; gaps at 0, 4 and 29.
  const std::vector<PowerSgdTensor> tensors = {{1, 3, 1}, {5, 2, 2}, {9, 3, 3}, {18, 1, 11}};
  const uint64_t bucket = 30;
  auto ranks = Ranks(3, tensors, 2, 8);
  ASSERT_EQ(ranks[0].compressed_tensors(), 0u);
  ASSERT_EQ(ranks[0].first_count(), 3u + 4 + 9 + 11);
  ASSERT_EQ(ranks[0].second_count(), 0u);
  std::mt19937 random(6);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> grads(3, std::vector<float>(bucket));
  for (auto& grad : grads) {
    for (float& x : grad) x = uniform(random);
  }
  const std::vector<std::vector<float>> inputs = grads;
  const std::vector<float> sum = SumOverRanks(inputs);
  Step(ranks, grads);
  for (size_t r = 0; r < 3; ++r) {
    for (uint64_t i = 0; i < bucket; ++i) {
      const bool gap = i == 0 || i == 4 || i == 29;
      EXPECT_EQ(grads[r][i], gap ? inputs[r][i] : sum[i]) << "rank " << r << " element " << i;
    }
  }
}

TEST(PowerSgdCompressorTest, MixedBucketLeavesGapsAloneAndSumsTheSmallTensors) {
  std::mt19937 random(7);
  const std::vector<PowerSgdTensor> tensors = {{2, 5, 1}, {8, 32, 16}, {520, 3, 3}};
  const uint64_t bucket = 530;  // gaps: [0, 2), [7, 8), [529, 530)
  auto ranks = Ranks(2, tensors, 2, 9);
  ASSERT_EQ(ranks[0].compressed_tensors(), 1u);
  std::vector<std::vector<float>> grads = {RandomMatrix(bucket, 1, random),
                                           RandomMatrix(bucket, 1, random)};
  const std::vector<std::vector<float>> inputs = grads;
  const std::vector<float> sum = SumOverRanks(inputs);
  Step(ranks, grads);
  for (uint64_t i : {0u, 1u, 7u, 529u}) {
    EXPECT_EQ(grads[0][i], inputs[0][i]);
    EXPECT_EQ(grads[1][i], inputs[1][i]);
  }
  for (uint64_t i = 2; i < 7; ++i) EXPECT_EQ(grads[0][i], sum[i]);
  for (uint64_t i = 520; i < 529; ++i) EXPECT_EQ(grads[1][i], sum[i]);
}

TEST(PowerSgdCompressorTest, AZeroGradientDoesNotStallLaterSteps) {
  std::mt19937 random(8);
  const uint64_t rows = 24, cols = 18;
  const Matrix m = LowRankMatrix(rows, cols, 2, random);
  auto ranks = Ranks(1, {{0, rows, cols}}, 2, 10);
  std::vector<std::vector<float>> zero = {Matrix(rows * cols, 0.0f)};
  Step(ranks, zero);  // P, and so the summed Q, are all zero
  EXPECT_THAT(zero[0], Each(0.0f));
  EXPECT_THAT(ranks[0].error(), Each(0.0f));
  std::vector<std::vector<float>> grads = {m};
  Step(ranks, grads);
  EXPECT_LT(MaxAbsDifference(grads[0], m), 1e-4 * MaxAbs(m));
}

TEST(PowerSgdCompressorTest, SameInputsGiveBitwiseIdenticalOutputs) {
  const std::vector<PowerSgdTensor> tensors = {{0, 70, 33}, {2310, 7, 1}, {2317, 19, 64}};
  const uint64_t bucket = 2317 + 19 * 64;
  PowerSgdCompressor a(tensors, 3, 11);
  PowerSgdCompressor b(tensors, 3, 11);
  PowerSgdCompressor other_seed(tensors, 3, 12);
  std::mt19937 random(9);
  for (int step = 0; step < 3; ++step) {
    const std::vector<float> gradient = RandomMatrix(bucket, 1, random);
    std::vector<float> grad_a = gradient, grad_b = gradient, grad_other = gradient;
    std::vector<float> first_a(a.first_count()), first_b(b.first_count());
    std::vector<float> first_other(other_seed.first_count());
    std::vector<float> second_a(a.second_count()), second_b(b.second_count());
    std::vector<float> second_other(other_seed.second_count());
    a.ComputeP(grad_a.data(), first_a.data());
    b.ComputeP(grad_b.data(), first_b.data());
    other_seed.ComputeP(grad_other.data(), first_other.data());
    EXPECT_THAT(first_b, Eq(first_a));
    if (step == 0) {
      EXPECT_NE(first_other, first_a);  // the seed picks the starting Q
    }
    a.ComputeQ(grad_a.data(), first_a.data(), second_a.data());
    b.ComputeQ(grad_b.data(), first_b.data(), second_b.data());
    other_seed.ComputeQ(grad_other.data(), first_other.data(), second_other.data());
    EXPECT_THAT(second_b, Eq(second_a));
    a.Decompress(first_a.data(), second_a.data(), grad_a.data());
    b.Decompress(first_b.data(), second_b.data(), grad_b.data());
    other_seed.Decompress(first_other.data(), second_other.data(), grad_other.data());
    EXPECT_THAT(grad_b, Eq(grad_a));
    EXPECT_THAT(b.error(), Eq(a.error()));
  }
}

TEST(PowerSgdCompressorTest, ResetForgetsTheErrorAndRestartsQ) {
  const std::vector<PowerSgdTensor> tensors = {{0, 30, 20}, {600, 4, 1}};
  std::mt19937 random(10);
  std::vector<std::vector<float>> gradients;
  for (int step = 0; step < 3; ++step) gradients.push_back(RandomMatrix(604, 1, random));
  auto run = [&](std::vector<PowerSgdCompressor>& ranks) {
    std::vector<std::vector<float>> outputs;
    for (const std::vector<float>& gradient : gradients) {
      std::vector<std::vector<float>> grads = {gradient};
      Step(ranks, grads);
      outputs.push_back(grads[0]);
    }
    return outputs;
  };
  auto fresh = Ranks(1, tensors, 2, 13);
  const auto expected = run(fresh);
  auto used = Ranks(1, tensors, 2, 13);
  run(used);
  std::vector<std::vector<float>> more = {RandomMatrix(604, 1, random)};
  Step(used, more);
  ASSERT_GT(MaxAbs(used[0].error()), 0.1);
  used[0].Reset();
  EXPECT_THAT(used[0].error(), Each(0.0f));
  EXPECT_THAT(run(used), Eq(expected));
}

}  // namespace
}  // namespace cohort
