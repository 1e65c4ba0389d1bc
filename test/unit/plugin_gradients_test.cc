// The example plugins through the ABI: linreg's gradients against the formulas of linreg_data.h,
// and both plugins' gradients against finite differences (runtime/conformance).
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "plugins/linreg/linreg_data.h"
#include "runtime/conformance/gradient_check.h"
#include "runtime/plugin/loaded_model.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using testing::PluginPath;

class PluginGradientsTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<LoadedModel>> Create(const std::string& file, Hyperparameters hp) {
    return testing::CreateModel(file, std::move(hp), memory_, /*trial_seed=*/7);
  }
  static BatchSpec Batch(std::vector<uint64_t> records) {
    return testing::TrainingBatch(std::move(records));
  }
  static void ExpectPasses(const GradientCheckReport& report) {
    EXPECT_TRUE(report.passed()) << report.failures << " of " << report.coordinates.size()
                                 << " coordinates off; max abs error " << report.max_abs_error;
    for (const CoordinateCheck& c : report.coordinates) {
      EXPECT_TRUE(c.passed) << c.tensor << "[" << c.index << "]: analytic " << c.analytic
                            << ", numeric " << c.numeric;
    }
  }
  CpuOnlyMemoryProvider memory_;
};

TEST_F(PluginGradientsTest, LinregGradientsMatchTheHandDerivedFormula) {
  Hyperparameters hp;
  hp.Set("dim", 3);
  auto model = Create("linreg/linreg.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<uint64_t> records = {0, 4, 9, 13};
  ASSERT_TRUE((*model)->TrainBatch(Batch(records)).ok());

  // With w = 0, b = 0: dL/dw_j = -mean(y_i x_ij), dL/db = -mean(y_i), loss = mean(0.5 y_i^2).
  TensorArena& arena = (*model)->arena();
  const float* gw = static_cast<const float*>(arena.grad(0));
  const float* gb = static_cast<const float*>(arena.grad(1));
  double expected_b = 0;
  for (uint64_t i : records)
    expected_b -= linreg::Target(COHORT_SPLIT_TRAINING, i, 3) / records.size();
  EXPECT_NEAR(gb[0], expected_b, 1e-6);
  for (uint64_t j = 0; j < 3; ++j) {
    double expected = 0;
    for (uint64_t i : records) {
      expected -= linreg::Target(COHORT_SPLIT_TRAINING, i, 3) *
                  linreg::Feature(COHORT_SPLIT_TRAINING, i, j) / records.size();
    }
    EXPECT_NEAR(gw[j], expected, 1e-6) << "w[" << j << "]";
  }
}

TEST_F(PluginGradientsTest, LinregMatchesFiniteDifferences) {
  Hyperparameters hp;
  hp.Set("dim", 6);
  hp.Set("init_scale", 0.5);
  auto model = Create("linreg/linreg.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  auto report = CheckGradients(**model, Batch({1, 2, 3, 5, 8, 13, 21, 34}));
  ASSERT_TRUE(report.ok()) << report.status();
  ExpectPasses(*report);
}

TEST_F(PluginGradientsTest, MlpMatchesFiniteDifferences) {
  Hyperparameters hp;
  hp.Set("hidden_size", 16);
  hp.Set("hidden_layers", 2);
  auto model = Create("mlp/mlp.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->arena().tensor_count(), 6u);   // weight and bias of 3 layers
  EXPECT_EQ((*model)->arena().blocks().size(), 1u);  // all float32 on the CPU: one arena
  GradientCheckOptions options;
  options.coordinates_per_tensor = 10;
  auto report = CheckGradients(**model, Batch({0, 1, 2, 3, 4, 5, 6, 7}), options);
  ASSERT_TRUE(report.ok()) << report.status();
  ExpectPasses(*report);
}

TEST_F(PluginGradientsTest, GradientCheckCatchesAWrongGradient) {
  // This defective plugin adds twice its true gradient.
  Hyperparameters hp;
  hp.Set("init", 0.5);
  auto model = Create("test/defect_wrong_gradient.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  auto report = CheckGradients(**model, Batch({1, 2}));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->passed());
  EXPECT_EQ(report->failures, report->coordinates.size());
  EXPECT_NEAR(report->coordinates[0].analytic, 2 * report->coordinates[0].numeric, 1e-3);
}

}  // namespace
}  // namespace cohort
