// Adam's and AdamW's update rules against parameters computed by hand, in float32 and float64.
//
// With b1 = b2 = 0.5 the bias-corrected moments have short closed forms:
//   after step 1: m^ = g1,                  v^ = g1^2
//   after step 2: m^ = (g1 + 2 g2) / 3,     v^ = (g1^2 + 2 g2^2) / 3
//   after step 3: m^ = (g1 + 2 g2 + 4 g3)/7, v^ = (g1^2 + 2 g2^2 + 4 g3^2) / 7
// and each step is p -= lr * m^ / (sqrt(v^) + eps).
#include <cmath>

#include "gtest/gtest.h"
#include "runtime/optim/optimizer.h"
#include "test/optim/optim_test_util.h"

namespace cohort {
namespace {

using optim_test::ExpectTrajectory;
using optim_test::RunSteps;

constexpr double kEps = 1e-8;

OptimizerOptions Adam(OptimizerOptions::Kind kind, double lr, double beta1, double beta2,
                      double weight_decay = 0) {
  OptimizerOptions options;
  options.kind = kind;
  options.learning_rate = lr;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = kEps;
  options.weight_decay = weight_decay;
  return options;
}

// lr * m^ / (sqrt(v^) + eps): how far one step moves a parameter.
double Move(double lr, double m_hat, double v_hat) {
  return lr * m_hat / (std::sqrt(v_hat) + kEps);
}

template <class T>
class AdamRuleTest : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AdamRuleTest, Precisions);

TYPED_TEST(AdamRuleTest, ThreeStepsWithHalfBetas) {
  // lr 0.1; g1 = [1, -2, 0.5], g2 = [1, 1, 0.5], g3 = [-1, 4, 0].
  //   step 1: m^ = g1, v^ = g1^2: every parameter moves 0.1 against its gradient's sign.
  //   step 2: m^ = [3/3, 0/3, 1.5/3] = [1, 0, 0.5]; v^ = [3/3, 6/3, 0.75/3] = [1, 2, 0.25]
  //   step 3: m^ = [(1 + 2 - 4)/7, (-2 + 2 + 16)/7, (0.5 + 1)/7] = [-1/7, 16/7, 1.5/7]
  //           v^ = [(1 + 2 + 4)/7, (4 + 2 + 64)/7, (0.25 + 0.5)/7] = [1, 10, 0.75/7]
  const double p1[] = {1 - Move(0.1, 1, 1), 2 - Move(0.1, -2, 4), 3 - Move(0.1, 0.5, 0.25)};
  const double p2[] = {p1[0] - Move(0.1, 1, 1), p1[1] - Move(0.1, 0, 2),
                       p1[2] - Move(0.1, 0.5, 0.25)};
  const double p3[] = {p2[0] - Move(0.1, -1.0 / 7, 1), p2[1] - Move(0.1, 16.0 / 7, 10),
                       p2[2] - Move(0.1, 1.5 / 7, 0.75 / 7)};
  // Rounded: [0.9, 2.1, 2.9], [0.8, 2.1, 2.8], [0.8142857, 2.0277194, 2.7345346].
  EXPECT_NEAR(p3[0], 0.8142857, 1e-7);
  EXPECT_NEAR(p3[1], 2.0277194, 1e-7);
  EXPECT_NEAR(p3[2], 2.7345346, 1e-7);
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdam, 0.1, 0.5, 0.5), {1, 2, 3},
                          {{1, -2, 0.5}, {1, 1, 0.5}, {-1, 4, 0}}),
      {{p1[0], p1[1], p1[2]}, {p2[0], p2[1], p2[2]}, {p3[0], p3[1], p3[2]}});
}

TYPED_TEST(AdamRuleTest, TwoStepsWithDefaultBetas) {
  // lr 0.001, b1 0.9, b2 0.999; g1 = [0.3, -7, 0.001], g2 = [0.1, -7, 0].
  //   step 1: m^ = g1, v^ = g1^2: [1 - 0.001, 2 + 0.001, 3 - 0.001] (up to eps)
  //   step 2, element 0: m = 0.9*0.03 + 0.1*0.1 = 0.037;  v = 0.999*0.00009 + 0.001*0.01 =
  //   0.00009991
  //           bias corrections 1 - 0.81 = 0.19 and 1 - 0.998001 = 0.001999
  //   step 2, element 1: the same gradient twice, so m^ = -7 and v^ = 49
  //   step 2, element 2: m = 0.9*0.0001 = 0.00009; v = 0.999*0.000000001 = 0.000000000999
  const double p1[] = {1 - Move(0.001, 0.3, 0.09), 2 - Move(0.001, -7, 49),
                       3 - Move(0.001, 0.001, 0.000001)};
  const double p2[] = {p1[0] - Move(0.001, 0.037 / 0.19, 0.00009991 / 0.001999),
                       p1[1] - Move(0.001, -7, 49),
                       p1[2] - Move(0.001, 0.00009 / 0.19, 0.000000000999 / 0.001999)};
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdam, 0.001, 0.9, 0.999), {1, 2, 3},
                          {{0.3, -7, 0.001}, {0.1, -7, 0}}),
      {{p1[0], p1[1], p1[2]}, {p2[0], p2[1], p2[2]}});
}

TYPED_TEST(AdamRuleTest, AdamAddsWeightDecayToTheGradient) {
  // lr 0.1, weight decay 0.5, half betas, g = [-0.25, 0, 0] every step; Adam sees g' = g + 0.5 p:
  //   step 1: g' = [-0.25 + 0.5, 0 + 1, 0] = [0.25, 1, 0]: p = [0.9, 1.9, 0] (up to eps)
  //   step 2: g' = [-0.25 + 0.5 p1, 0 + 0.5 p1, 0] = [0.2, 0.95, 0] (up to eps)
  //           m^ = [(0.25 + 2*0.2)/3, (1 + 2*0.95)/3, 0]; v^ = [(0.0625 + 2*0.04)/3, (1 +
  //           2*0.9025)/3, 0]
  const double p1[] = {1 - Move(0.1, 0.25, 0.0625), 2 - Move(0.1, 1, 1), 0};
  const double g2[] = {-0.25 + 0.5 * p1[0], 0.5 * p1[1]};  // eps moved p1 a little off 0.9 and 1.9
  const double p2[] = {p1[0] - Move(0.1, (0.25 + 2 * g2[0]) / 3, (0.0625 + 2 * g2[0] * g2[0]) / 3),
                       p1[1] - Move(0.1, (1 + 2 * g2[1]) / 3, (1 + 2 * g2[1] * g2[1]) / 3), 0};
  EXPECT_NEAR(p2[0], 0.9 - 0.1 * (0.65 / 3) / std::sqrt(0.1425 / 3), 1e-7);
  EXPECT_NEAR(p2[1], 1.9 - 0.1 * (2.9 / 3) / std::sqrt(2.805 / 3), 1e-7);
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdam, 0.1, 0.5, 0.5, 0.5), {1, 2, 0},
                          {{-0.25, 0, 0}, {-0.25, 0, 0}}),
      {{p1[0], p1[1], p1[2]}, {p2[0], p2[1], p2[2]}});
}

TYPED_TEST(AdamRuleTest, AdamWDecaysTheParameterFirst) {
  // lr 0.1, weight decay 0.5, half betas, g = [-0.25, 0, 0] every step; p *= 1 - 0.05 first, then
  // Adam on g itself (a zero gradient leaves m = 0, so only the decay moves element 1):
  //   step 1: p = [0.95, 1.9, 0], then element 0 moves +0.1: [1.05, 1.9, 0]
  //   step 2: p = [0.9975, 1.805, 0], then element 0 moves +0.1 (m^ = g, v^ = g^2): [1.0975, 1.805,
  //   0]
  const double p1[] = {0.95 + Move(0.1, 0.25, 0.0625), 1.9, 0};
  const double p2[] = {p1[0] * 0.95 + Move(0.1, 0.25, 0.0625), 1.805, 0};
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdamW, 0.1, 0.5, 0.5, 0.5), {1, 2, 0},
                          {{-0.25, 0, 0}, {-0.25, 0, 0}}),
      {{p1[0], p1[1], p1[2]}, {p2[0], p2[1], p2[2]}});
}

TYPED_TEST(AdamRuleTest, AdamWWithoutDecayIsAdam) {
  const std::vector<std::vector<double>> grads = {{0.5, -1, 2}, {-0.1, 0.3, 0}, {1, 1, 1}};
  const auto adam =
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdam, 0.01, 0.9, 0.999), {1, 2, 3}, grads);
  const auto adamw =
      RunSteps<TypeParam>(Adam(OptimizerOptions::Kind::kAdamW, 0.01, 0.9, 0.999), {1, 2, 3}, grads);
  ASSERT_EQ(adam.size(), 3u);
  EXPECT_EQ(adam, adamw);
}

}  // namespace
}  // namespace cohort
