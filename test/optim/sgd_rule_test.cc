// SGD's update rule against parameters computed by hand, in float32 and float64.
#include "gtest/gtest.h"
#include "runtime/optim/optimizer.h"
#include "test/optim/optim_test_util.h"

namespace cohort {
namespace {

using optim_test::ExpectTrajectory;
using optim_test::RunSteps;

OptimizerOptions Sgd(double lr, double momentum = 0, bool nesterov = false,
                     double weight_decay = 0) {
  OptimizerOptions options;
  options.kind = OptimizerOptions::Kind::kSgd;
  options.learning_rate = lr;
  options.momentum = momentum;
  options.nesterov = nesterov;
  options.weight_decay = weight_decay;
  return options;
}

template <class T>
class SgdRuleTest : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SgdRuleTest, Precisions);

TYPED_TEST(SgdRuleTest, Plain) {
  // p -= 0.1 * g
  //   step 1, g = [0.5, -1, 2]:   [1 - 0.05, 2 + 0.1, 3 - 0.2]        = [0.95, 2.1, 2.8]
  //   step 2, g = [1, 0, -0.5]:   [0.95 - 0.1, 2.1 - 0, 2.8 + 0.05]    = [0.85, 2.1, 2.85]
  //   step 3, g = [-2, 0.25, 1]:  [0.85 + 0.2, 2.1 - 0.025, 2.85 - 0.1] = [1.05, 2.075, 2.75]
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Sgd(0.1), {1, 2, 3}, {{0.5, -1, 2}, {1, 0, -0.5}, {-2, 0.25, 1}}),
      {{0.95, 2.1, 2.8}, {0.85, 2.1, 2.85}, {1.05, 2.075, 2.75}});
}

TYPED_TEST(SgdRuleTest, Momentum) {
  // lr 0.1, momentum 0.9, g = [1, -1, 0.5] every step:
  //   step 1: buf = g                   = [1, -1, 0.5];      p = [0.9, 2.1, 2.95]
  //   step 2: buf = 0.9*buf + g = 1.9 g = [1.9, -1.9, 0.95]; p = [0.9 - 0.19, 2.1 + 0.19, 2.95 -
  //   0.095] step 3: buf = 0.9*1.9 g + g = 2.71 g;                  p -= 0.271 g
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Sgd(0.1, 0.9), {1, 2, 3}, {{1, -1, 0.5}, {1, -1, 0.5}, {1, -1, 0.5}}),
      {{0.9, 2.1, 2.95}, {0.71, 2.29, 2.855}, {0.439, 2.561, 2.7195}});
}

TYPED_TEST(SgdRuleTest, Nesterov) {
  // lr 0.1, momentum 0.9, nesterov, g = [1, -1, 0.5] every step; the step uses g + 0.9*buf:
  //   step 1: buf = g,      step g + 0.9 g    = 1.9 g:   p = [1 - 0.19, 2 + 0.19, 3 - 0.095]
  //   step 2: buf = 1.9 g,  step g + 1.71 g   = 2.71 g:  p -= 0.271 g
  //   step 3: buf = 2.71 g, step g + 2.439 g  = 3.439 g: p -= 0.3439 g
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Sgd(0.1, 0.9, true), {1, 2, 3},
                          {{1, -1, 0.5}, {1, -1, 0.5}, {1, -1, 0.5}}),
      {{0.81, 2.19, 2.905}, {0.539, 2.461, 2.7695}, {0.1951, 2.8049, 2.59755}});
}

TYPED_TEST(SgdRuleTest, WeightDecay) {
  // lr 0.1, weight decay 0.5, g = [1, -1, 0.5] every step; the step uses g + 0.5 p:
  //   step 1: g' = [1 + 0.5, -1 + 1, 0.5 + 1.5]   = [1.5, 0, 2]:       p = [0.85, 2, 2.8]
  //   step 2: g' = [1 + 0.425, 0, 0.5 + 1.4]      = [1.425, 0, 1.9]:   p = [0.7075, 2, 2.61]
  //   step 3: g' = [1 + 0.35375, 0, 0.5 + 1.305]  = [1.35375, 0, 1.805]: p = [0.572125, 2, 2.4295]
  ExpectTrajectory<TypeParam>(RunSteps<TypeParam>(Sgd(0.1, 0, false, 0.5), {1, 2, 3},
                                                  {{1, -1, 0.5}, {1, -1, 0.5}, {1, -1, 0.5}}),
                              {{0.85, 2, 2.8}, {0.7075, 2, 2.61}, {0.572125, 2, 2.4295}});
}

TYPED_TEST(SgdRuleTest, MomentumWithWeightDecayKeepsZeroAtZero) {
  // lr 0.1, momentum 0.5, weight decay 0.1, g = [0.5, 0.5, 0] every step:
  //   step 1: g' = [0.5 + 0.1, 0.5 - 0.2, 0] = [0.6, 0.3, 0] = buf;      p = [0.94, -2.03, 0]
  //   step 2: g' = [0.5 + 0.094, 0.5 - 0.203, 0] = [0.594, 0.297, 0];
  //           buf = 0.5*[0.6, 0.3, 0] + g' = [0.894, 0.447, 0];          p = [0.8506, -2.0747, 0]
  ExpectTrajectory<TypeParam>(
      RunSteps<TypeParam>(Sgd(0.1, 0.5, false, 0.1), {1, -2, 0}, {{0.5, 0.5, 0}, {0.5, 0.5, 0}}),
      {{0.94, -2.03, 0}, {0.8506, -2.0747, 0}});
}

}  // namespace
}  // namespace cohort
