// The LibTorch examples at one slot against the same models run by plain LibTorch in this process
// (plugins/torch_cnn/cnn_model.h, plugins/torch_gpt/gpt_model.h): from the same seed, batch after
// batch, the loss and every gradient the plugin adds into the host's arena are bit for bit plain
// LibTorch's, and so are BatchNorm's running statistics, which the CNN keeps in state tensors.
// Both sides take the same plain gradient step between batches, so any difference would come from
// the binding, not from an optimizer.
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/torch_cnn/cnn_batch.h"
#include "plugins/torch_cnn/cnn_data.h"
#include "plugins/torch_cnn/cnn_model.h"
#include "plugins/torch_gpt/default_text.h"
#include "plugins/torch_gpt/gpt_model.h"
#include "runtime/arena/device_memory.h"
#include "runtime/plugin/loaded_model.h"
#include "test/unit/test_plugins.h"

namespace cohort {
namespace {

constexpr uint64_t kExampleSeed = 7;
constexpr double kLearningRate = 0.05;
constexpr int kBatches = 4;

std::unique_ptr<LoadedModel> Create(const std::string& plugin_path, Hyperparameters hyperparameters,
                                    DeviceMemoryProvider& memory) {
  auto plugin = PluginLibrary::Open(testing::PluginPath(plugin_path));
  EXPECT_TRUE(plugin.ok()) << plugin.status();
  if (!plugin.ok()) return nullptr;
  ModelHostOptions options;
  options.context.trial_seed = kExampleSeed;
  options.hyperparameters = std::move(hyperparameters);
  options.memory = &memory;
  auto model = LoadedModel::Create(*plugin, std::move(options));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

// The bytes of `count` elements of `tensor`'s kind at `memory`, and of `tensor`.
std::string Bytes(const void* memory, const torch::Tensor& like) {
  return std::string(static_cast<const char*>(memory), like.numel() * like.element_size());
}
std::string Bytes(const torch::Tensor& tensor) {
  const torch::Tensor dense = tensor.contiguous();
  return Bytes(dense.data_ptr(), dense);
}

// Checks the arena against `reference` (its parameters' values and gradients, in registration
// order), then takes the same step on both: p -= lr * grad, and zeroes the gradients.
void CompareAndStep(LoadedModel& model, torch::nn::Module& reference, int batch) {
  TensorArena& arena = model.arena();
  const auto parameters = reference.named_parameters();
  ASSERT_EQ(arena.tensor_count(), parameters.size());
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const torch::Tensor& p = parameters[i].value();
    ASSERT_EQ(arena.spec(i).name, parameters[i].key());
    EXPECT_EQ(Bytes(arena.data(i), p), Bytes(p)) << parameters[i].key() << " after batch " << batch;
    EXPECT_EQ(Bytes(arena.grad(i), p), Bytes(p.grad()))
        << "gradient of " << parameters[i].key() << " in batch " << batch;
    torch::Tensor arena_value = torch::from_blob(arena.data(i), p.sizes(), p.options());
    torch::Tensor arena_grad = torch::from_blob(arena.grad(i), p.sizes(), p.options());
    arena_value.sub_(arena_grad * kLearningRate);
    p.sub_(p.grad() * kLearningRate);
    p.grad().zero_();
  }
  ASSERT_TRUE(arena.ZeroGradients().ok());
}

// torch_cnn against the same network in plain LibTorch; `records_on_device` reads every record
// at the start instead of each batch's (the hyperparameter), which must change nothing.
void ExpectTorchCnnTrainsAsPlainLibTorch(bool records_on_device) {
  CpuOnlyMemoryProvider memory;
  Hyperparameters hp;
  hp.Set("width", 8);
  hp.Set("synthetic_train_records", 256);
  hp.Set("synthetic_validation_records", 32);
  hp.Set("records_on_device", records_on_device);
  std::unique_ptr<LoadedModel> model = Create("torch_cnn/torch_cnn.so", hp, memory);
  ASSERT_NE(model, nullptr);

  torch_cnn::Cnn reference = torch_cnn::MakeCnn(8, kExampleSeed);
  torch_cnn::DataOptions data_options;
  data_options.synthetic_train_records = 256;
  data_options.synthetic_validation_records = 32;
  const torch_cnn::CnnData data = torch_cnn::OpenCnnData(data_options);
  for (int b = 0; b < kBatches; ++b) {
    std::vector<uint64_t> records;
    for (uint64_t r = 0; r < 16; ++r) records.push_back((b * 37 + r * 11) % 256);
    absl::StatusOr<BatchMetrics> metrics = model->TrainBatch(testing::TrainingBatch(records));
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    reference->train();
    auto [images, labels] = torch_cnn::Gather(*data.training, records.data(), records.size());
    const torch_cnn::BatchResult result = torch_cnn::Score(reference->forward(images), labels);
    result.loss.backward();
    EXPECT_EQ(metrics->Find("loss")->value, result.loss.item<double>()) << "batch " << b;
    CompareAndStep(*model, *reference, b);
  }

  // BatchNorm's running statistics and batch counters: the state tensors, as plain LibTorch's.
  const TensorArena* state = model->state_arena();
  ASSERT_NE(state, nullptr);
  const auto buffers = reference->named_buffers();
  ASSERT_EQ(state->tensor_count(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(state->spec(i).name, buffers[i].key());
    EXPECT_EQ(Bytes(state->data(i), buffers[i].value()), Bytes(buffers[i].value()))
        << buffers[i].key();
  }
  EXPECT_EQ(*static_cast<const int64_t*>(state->data(2)), kBatches) << state->spec(2).name;
}

TEST(TorchExamplesTest, TorchCnnTrainsAsPlainLibTorchBitForBit) {
  ExpectTorchCnnTrainsAsPlainLibTorch(false);
}

TEST(TorchExamplesTest, TorchCnnWithItsRecordsReadOnceTrainsTheSame) {
  ExpectTorchCnnTrainsAsPlainLibTorch(true);
}

TEST(TorchExamplesTest, ResidentRecordsGatherAsGatherDoes) {
  torch_cnn::DataOptions options;
  options.synthetic_train_records = 100;
  options.synthetic_validation_records = 0;
  const torch_cnn::CnnData data = torch_cnn::OpenCnnData(options);
  const torch_cnn::ResidentRecords resident(*data.training, torch::Device(torch::kCPU));
  const std::vector<uint64_t> records = {99, 0, 42, 42, 7};
  auto [images, labels] = resident.Batch(records.data(), records.size());
  auto [read_images, read_labels] =
      torch_cnn::Gather(*data.training, records.data(), records.size());
  EXPECT_TRUE(torch::equal(images, read_images));
  EXPECT_TRUE(torch::equal(labels, read_labels));
  const std::vector<uint64_t> past = {3, 100};
  try {
    resident.Batch(past.data(), past.size());
    ADD_FAILURE() << "record 100 of 100 was gathered";
  } catch (const cohort::Error& error) {
    EXPECT_EQ(error.code(), COHORT_STATUS_OUT_OF_RANGE);
  }
}

TEST(TorchExamplesTest, TorchGptTrainsAsPlainLibTorchBitForBit) {
  CpuOnlyMemoryProvider memory;
  Hyperparameters hp;
  hp.Set("context", 16);
  hp.Set("embedding", 32);
  hp.Set("heads", 2);
  hp.Set("layers", 1);
  std::unique_ptr<LoadedModel> model = Create("torch_gpt/torch_gpt.so", hp, memory);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->state_arena(), nullptr) << "the GPT has no buffers";

  torch_gpt::GptOptions options;
  options.context = 16;
  options.embedding = 32;
  options.heads = 2;
  options.layers = 1;
  const torch_gpt::Corpus corpus(torch_gpt::kDefaultText, options.context, "the default text");
  torch_gpt::Gpt reference = torch_gpt::MakeGpt(options, corpus.vocabulary_size(), kExampleSeed);
  for (int b = 0; b < kBatches; ++b) {
    std::vector<uint64_t> records;
    for (uint64_t r = 0; r < 8; ++r) records.push_back(b * 1000 + r * 97);
    absl::StatusOr<BatchMetrics> metrics = model->TrainBatch(testing::TrainingBatch(records));
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    const torch::Tensor loss =
        torch_gpt::Loss(reference, corpus.Windows(COHORT_SPLIT_TRAINING, records));
    loss.backward();
    EXPECT_EQ(metrics->Find("loss")->value, loss.item<double>()) << "batch " << b;
    CompareAndStep(*model, *reference, b);
  }
}

}  // namespace
}  // namespace cohort
