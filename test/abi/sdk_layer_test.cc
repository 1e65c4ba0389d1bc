// ABI compatibility: the reference plugin built against the frozen 1.0 headers still loads and
// trains, and the C++ layer's generated table behaves as plugin.h promises.
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using testing::PluginPath;

class AbiTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<LoadedModel>> Create(const std::string& file, Hyperparameters hp = {}) {
    return testing::CreateModel(file, std::move(hp), memory_);
  }
  static BatchSpec Batch(std::vector<uint64_t> records) { return testing::TrainingBatch(std::move(records)); }
  CpuOnlyMemoryProvider memory_;
};

TEST_F(AbiTest, ReferencePluginBuiltAgainstFrozenV1_0HeadersLoadsAndTrains) {
  auto model = Create("test/c_quadratic_v1_0.so");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->plugin().abi_version().major, 1u);
  EXPECT_EQ((*model)->plugin().abi_version().minor, 0u);
  auto metrics = (*model)->TrainBatch(Batch({0, 1, 2}));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->Find("loss")->record_count, 3u);
  auto state = (*model)->SaveState();
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE((*model)->LoadState(*state).ok());
}

TEST_F(AbiTest, CppLayerFillsOptionalFunctionsThatAreOverridden) {
  auto model = Create("test/cpp_layer.so");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE((*model)->has_optimizer());
  EXPECT_TRUE((*model)->has_state());
  EXPECT_EQ((*model)->plugin().name(), "cpp_layer");

  ASSERT_TRUE((*model)->TrainBatch(Batch({2})).ok());
  const double* w = static_cast<const double*>((*model)->arena().data(0));
  const double* g = static_cast<const double*>((*model)->arena().grad(0));
  EXPECT_EQ(g[0], -2.0);  // w = 0, target (2, -2)
  EXPECT_EQ(g[1], 2.0);
  ASSERT_TRUE((*model)->OptimizerStep(0, 1).ok());
  EXPECT_EQ(w[0], 1.0);  // 0 - 0.5 * -2
  EXPECT_EQ(w[1], -1.0);

  auto state = (*model)->SaveState();
  ASSERT_TRUE(state.ok());
  uint64_t steps = 0;
  ASSERT_EQ(state->size(), sizeof steps);
  std::memcpy(&steps, state->data(), sizeof steps);
  EXPECT_EQ(steps, 1u);
}

TEST_F(AbiTest, CLayerPluginWithoutOptimizerLeavesItNull) {
  auto plugin = PluginLibrary::Open(PluginPath("test/c_quadratic.so"));
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->api().optimizer_step, nullptr);
}

struct ThrowCase {
  const char* what;
  absl::StatusCode code;
  const char* message;
};

class CppLayerErrorTest : public AbiTest, public ::testing::WithParamInterface<ThrowCase> {};

TEST_P(CppLayerErrorTest, ExceptionsBecomeHostErrorsNotCrashes) {
  Hyperparameters hp;
  hp.Set("throw_in_train", GetParam().what);
  auto model = Create("test/cpp_layer.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  auto metrics = (*model)->TrainBatch(Batch({0}));
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), GetParam().code);
  EXPECT_EQ(metrics.status().message(), std::string("plugin cpp_layer: train_batch (batch 0): ") + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Throws, CppLayerErrorTest,
    ::testing::Values(ThrowCase{"cohort", absl::StatusCode::kNotFound, "no record 99"},
                      ThrowCase{"std", absl::StatusCode::kInternal, "vector too long"},
                      ThrowCase{"other", absl::StatusCode::kUnknown,
                                "plugin threw an exception that is not a std::exception"}));

TEST_F(AbiTest, CppLayerHyperparameterErrorsReachTheHost) {
  Hyperparameters hp;
  hp.Set("learning_rate", "fast");
  auto model = Create("test/cpp_layer.so", hp);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(),
            "plugin cpp_layer: model_create: hyperparameter 'learning_rate' is a string (\"fast\"), not a double");
}

}  // namespace
}  // namespace cohort
