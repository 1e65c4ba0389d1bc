// cohort/torch.hpp through the torch_classifier test plugin, against the same LibTorch model run
// plainly in this process (torch_classifier.h): the module's parameters become the arena's
// tensors, by name and shape; a training batch's gradients land in the arena bit for bit as plain
// LibTorch computes them, each reported ready once; the module computes with what the arena
// holds; a gradient that stopped being the arena's is refused by name; the buffers are state
// tensors (ABI 1.4) the module updates in place; a GPU slot is refused by a plugin built without
// CUDA.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/test/torch_classifier.h"
#include "runtime/arena/device_memory.h"
#include "test/common/host_memory_as_device.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kSeed = 1234;

class TorchModuleTest : public ::testing::Test {
 protected:
  std::unique_ptr<LoadedModel> Create(Hyperparameters hyperparameters = {}) {
    auto plugin = PluginLibrary::Open(testing::PluginPath("test/torch_classifier.so"));
    EXPECT_TRUE(plugin.ok()) << plugin.status();
    if (!plugin.ok()) return nullptr;
    ModelHostOptions options;
    options.context.trial_seed = kSeed;
    options.hyperparameters = std::move(hyperparameters);
    options.memory = &memory_;
    options.on_gradients_ready = [this](uint32_t tensor, uint64_t, uint64_t) {
      ready_.push_back(tensor);
    };
    auto model = LoadedModel::Create(*plugin, std::move(options));
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }

  static std::vector<float> Values(const void* memory, uint64_t count) {
    const auto* floats = static_cast<const float*>(memory);
    return std::vector<float>(floats, floats + count);
  }

  CpuOnlyMemoryProvider memory_;
  std::vector<uint32_t> ready_;
};

TEST_F(TorchModuleTest, GradientsLandInTheArenaAsPlainLibTorchComputesThem) {
  std::unique_ptr<LoadedModel> model = Create();
  ASSERT_NE(model, nullptr);
  torch::nn::Sequential reference = torch_classifier::MakeNetwork(kSeed);
  const auto parameters = reference->named_parameters();
  TensorArena& arena = model->arena();
  ASSERT_EQ(arena.tensor_count(), parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const torch::Tensor& p = parameters[i].value();
    EXPECT_EQ(arena.spec(i).name, parameters[i].key());
    EXPECT_EQ(arena.spec(i).element_count, static_cast<uint64_t>(p.numel()));
    EXPECT_EQ(Values(arena.data(i), p.numel()),
              std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel()))
        << "the initial values of " << parameters[i].key();
  }

  const std::vector<uint64_t> records = {3, 17, 5, 40, 22, 9, 61, 0};
  absl::StatusOr<BatchMetrics> metrics = model->TrainBatch(testing::TrainingBatch(records));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  auto [features, labels] = torch_classifier::Records(records, COHORT_SPLIT_TRAINING, torch::kCPU);
  reference->train();
  const torch::Tensor loss = torch_classifier::Loss(reference, features, labels);
  loss.backward();
  EXPECT_EQ(metrics->Find("loss")->value, loss.item<double>());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const torch::Tensor grad = parameters[i].value().grad();
    EXPECT_EQ(Values(arena.grad(i), grad.numel()),
              std::vector<float>(grad.data_ptr<float>(), grad.data_ptr<float>() + grad.numel()))
        << "the gradient of " << parameters[i].key();
  }
  std::vector<uint32_t> reported = ready_;
  std::sort(reported.begin(), reported.end());
  EXPECT_THAT(reported, ElementsAre(0, 1, 2, 3, 4, 5));  // each parameter once
  EXPECT_EQ(ready_.front(), 5u) << "backward reaches the last layer's bias first";

  // A second batch adds into the same memory (the host zeroes it after a step).
  ASSERT_TRUE(model->TrainBatch(testing::TrainingBatch(records)).ok());
  const torch::Tensor first_grad = parameters[0].value().grad();
  EXPECT_EQ(static_cast<const float*>(arena.grad(0))[0], 2 * first_grad.data_ptr<float>()[0]);
}

TEST_F(TorchModuleTest, TheModuleComputesWithWhatTheArenaHolds) {
  std::unique_ptr<LoadedModel> model = Create();
  ASSERT_NE(model, nullptr);
  TensorArena& arena = model->arena();
  for (const ArenaBlock& block : arena.blocks()) {
    std::memset(block.data, 0, block.element_count * block.element_size);
  }
  BatchSpec batch = testing::TrainingBatch({1, 2, 3});
  batch.split = COHORT_SPLIT_VALIDATION;
  absl::StatusOr<BatchMetrics> metrics = model->EvaluateBatch(batch);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  // Zero weights and biases in the last layer: every class equally likely.
  EXPECT_NEAR(metrics->Find("loss")->value, std::log(3.0), 1e-6);
}

TEST_F(TorchModuleTest, AGradientThatLeftTheArenaIsRefusedByName) {
  Hyperparameters hyperparameters;
  hyperparameters.Set("drop_gradient_at_batch", 2);
  std::unique_ptr<LoadedModel> model = Create(std::move(hyperparameters));
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->TrainBatch(testing::TrainingBatch({1, 2})).ok());
  absl::StatusOr<BatchMetrics> second = model->TrainBatch(testing::TrainingBatch({1, 2}));
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("the gradient of parameter '0.weight' is no longer the host's"));
}

TEST_F(TorchModuleTest, BuffersAreStateTensorsTheModuleUpdatesInPlace) {
  std::unique_ptr<LoadedModel> trained = Create();
  ASSERT_NE(trained, nullptr);
  ASSERT_NE(trained->state_arena(), nullptr);
  const TensorArena& state = *trained->state_arena();
  ASSERT_EQ(state.tensor_count(), 3u);
  EXPECT_EQ(state.spec(0).name, "1.running_mean");
  EXPECT_EQ(state.spec(1).name, "1.running_var");
  EXPECT_EQ(state.spec(2).name, "1.num_batches_tracked");
  EXPECT_EQ(state.spec(2).dtype, COHORT_DTYPE_INT64);
  EXPECT_FALSE(state.has_gradients());
  EXPECT_EQ(static_cast<const float*>(state.data(1))[0], 1.0f) << "BatchNorm starts at variance 1";
  for (uint64_t b = 0; b < 3; ++b) {
    ASSERT_TRUE(trained->TrainBatch(testing::TrainingBatch({b, b + 7, b + 20, b + 33})).ok());
  }
  EXPECT_EQ(*static_cast<const int64_t*>(state.data(2)), 3)
      << "the batch counter lives in the host's memory";
  EXPECT_NE(static_cast<const float*>(state.data(0))[0], 0.0f);

  // The parameters and the state tensors are the whole model: copied into a fresh one, it
  // evaluates as the trained one does.
  std::unique_ptr<LoadedModel> restored = Create();
  ASSERT_NE(restored, nullptr);
  auto copy = [](const TensorArena& from, const TensorArena& to) {
    for (size_t b = 0; b < from.blocks().size(); ++b) {
      const ArenaBlock& block = from.blocks()[b];
      std::memcpy(to.blocks()[b].data, block.data, block.element_count * block.element_size);
    }
  };
  copy(trained->arena(), restored->arena());
  BatchSpec batch = testing::TrainingBatch({4, 5, 6, 7});
  batch.split = COHORT_SPLIT_VALIDATION;
  const double before = restored->EvaluateBatch(batch)->Find("loss")->value;
  copy(state, *restored->state_arena());
  const double want = trained->EvaluateBatch(batch)->Find("loss")->value;
  EXPECT_EQ(restored->EvaluateBatch(batch)->Find("loss")->value, want);
  EXPECT_NE(before, want) << "the running statistics made no difference";
  EXPECT_FALSE(restored->has_state()) << "the buffers need no plugin state";
}

TEST_F(TorchModuleTest, AGpuSlotIsRefusedWithoutCuda) {
  auto plugin = PluginLibrary::Open(testing::PluginPath("test/torch_classifier.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  testing::HostMemoryAsDevice memory;
  ModelHostOptions options;
  options.context.device = {COHORT_DEVICE_CUDA, 0};
  options.memory = &memory;
  auto model = LoadedModel::Create(*plugin, std::move(options));
  EXPECT_TRUE(absl::IsUnimplemented(model.status())) << model.status();
  EXPECT_THAT(std::string(model.status().message()), HasSubstr("without COHORT_TORCH_CUDA"));
}

}  // namespace
}  // namespace cohort
