// ABI compatibility: the reference plugins built against the frozen 1.0 and 1.1 headers still
// load and train, and the C++ layer's generated table and tensor specs behave as plugin.h promises
// (1.2: gradients_ready from the plugin's own threads).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::PluginPath;

class AbiTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<LoadedModel>> Create(const std::string& file,
                                                      Hyperparameters hp = {}) {
    return testing::CreateModel(file, std::move(hp), memory_);
  }
  static BatchSpec Batch(std::vector<uint64_t> records) {
    return testing::TrainingBatch(std::move(records));
  }
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

TEST_F(AbiTest, ReferencePluginBuiltAgainstFrozenV1_1HeadersLoadsAndTrains) {
  auto plugin = PluginLibrary::Open(COHORT_REFERENCE_PLUGIN_V1_1);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->abi_version().major, 1u);
  EXPECT_EQ((*plugin)->abi_version().minor, 1u);
  EXPECT_EQ((*plugin)->api().host_minor_required, 0u);
  ModelHostOptions options;
  options.memory = &memory_;
  auto model = LoadedModel::Create(*plugin, std::move(options));
  ASSERT_TRUE(model.ok()) << model.status();
  auto metrics = (*model)->TrainBatch(Batch({0, 1}));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->Find("loss")->record_count, 2u);
}

TEST_F(AbiTest, SpecsOfTheV1_0SizeRegisterTensorsOfUnknownShape) {
  auto model = Create("test/c_quadratic_v1_0.so");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT((*model)->arena().spec(0).shape, IsEmpty());
}

TEST_F(AbiTest, CppLayerCarriesShapesIntoTheArena) {
  Hyperparameters hp;
  hp.Set("dim", 3);
  auto linreg = Create("linreg/linreg.so", hp);
  ASSERT_TRUE(linreg.ok()) << linreg.status();
  EXPECT_THAT((*linreg)->arena().spec(0).shape,
              ElementsAre(1u, 3u));                                // weight: 1 output x 3 inputs
  EXPECT_THAT((*linreg)->arena().spec(1).shape, ElementsAre(1u));  // bias

  Hyperparameters mlp_hp;
  mlp_hp.Set("synthetic_input_dim", 5);
  mlp_hp.Set("synthetic_classes", 3);
  mlp_hp.Set("hidden_size", 4);
  mlp_hp.Set("hidden_layers", 1);
  auto mlp = Create("mlp/mlp.so", mlp_hp);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  const TensorArena& arena = (*mlp)->arena();
  ASSERT_EQ(arena.tensor_count(), 4u);
  EXPECT_EQ(arena.spec(0).name, "layer0.weight");
  EXPECT_THAT(arena.spec(0).shape, ElementsAre(5u, 4u));  // fan_in x fan_out, row-major
  EXPECT_THAT(arena.spec(1).shape, ElementsAre(4u));
  EXPECT_THAT(arena.spec(2).shape, ElementsAre(4u, 3u));
  EXPECT_THAT(arena.spec(3).shape, ElementsAre(3u));
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

// ABI 1.2: gradients_ready from the plugin's own threads reaches the host's hook, once per
// tensor, while train_batch runs; the C++ layer puts the model class's host_minor_required in the
// table.
TEST_F(AbiTest, GradientsReadyFromThePluginsOwnThreadsReachTheHost) {
  auto plugin = PluginLibrary::Open(PluginPath("test/threaded_ready.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->api().host_minor_required, 2u);
  std::mutex mutex;
  std::vector<uint32_t> reported;
  std::set<std::thread::id> threads;
  ModelHostOptions options;
  options.memory = &memory_;
  options.on_gradients_ready = [&](uint32_t tensor, uint64_t offset, uint64_t count) {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(offset, 0u);
    EXPECT_EQ(count, 5u);
    reported.push_back(tensor);
    threads.insert(std::this_thread::get_id());
  };
  auto model = LoadedModel::Create(*plugin, std::move(options));
  ASSERT_TRUE(model.ok()) << model.status();
  for (int batch = 0; batch < 3; ++batch) {
    reported.clear();
    ASSERT_TRUE((*model)->TrainBatch(Batch({1, 6})).ok());
    std::sort(reported.begin(), reported.end());
    EXPECT_THAT(reported, ElementsAre(0u, 1u, 2u, 3u)) << "batch " << batch;
  }
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "reported on the caller's thread";
  // Tensor 2 after 3 batches from zero: 3 times the mean of (0 - (r + 2 + j)) over r in {1, 6}.
  const float* g = static_cast<const float*>((*model)->arena().grad(2));
  EXPECT_EQ(g[0], 3 * -5.5f);
  EXPECT_EQ(g[4], 3 * -9.5f);
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
  EXPECT_EQ(metrics.status().message(),
            std::string("plugin cpp_layer: train_batch (batch_index 0): ") + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Throws, CppLayerErrorTest,
    ::testing::Values(ThrowCase{"cohort", absl::StatusCode::kNotFound, "no record 99"},
                      ThrowCase{"std", absl::StatusCode::kInternal, "vector too long"},
                      ThrowCase{"other", absl::StatusCode::kUnknown,
                                "plugin threw an exception that is not a std::exception"}));

// A list hyperparameter reaches a C++ model as its YAML text (hparam_text, SDK 1.5).
TEST_F(AbiTest, CppLayerReadsAListHyperparameterAsText) {
  Hyperparameters hp;
  hp.Set("w_init", Hyperparameters::Other{"[1.5, -2]"});
  auto model = Create("test/cpp_layer.so", hp);
  ASSERT_TRUE(model.ok()) << model.status();
  const ArenaBlock& w = (*model)->arena().blocks().at(0);
  ASSERT_EQ(w.element_count, 2u);
  EXPECT_EQ(static_cast<const double*>(w.data)[0], 1.5);
  EXPECT_EQ(static_cast<const double*>(w.data)[1], -2.0);
}

TEST_F(AbiTest, CppLayerHyperparameterErrorsReachTheHost) {
  Hyperparameters hp;
  hp.Set("learning_rate", "fast");
  auto model = Create("test/cpp_layer.so", hp);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(),
            "plugin cpp_layer: model_create: hyperparameter 'learning_rate' is a string "
            "(\"fast\"), not a double");
}

}  // namespace
}  // namespace cohort
