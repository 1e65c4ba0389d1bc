// The peer of the torch_cnn plugin: its model (plugins/torch_cnn/cnn_model.h), data
// (cnn_data.h) and optimizer trained by a plain LibTorch loop on one thread, with no runtime, as
// a hand-written PyTorch-style loop would: gather a batch, forward, backward, step, zero_grad, with
// LibTorch's own optimizer (the same update rule as Cohort's). The defaults are those of
// examples/torch_cnn.yaml (60,000 synthetic shapes, width 8, SGD at 0.05 with momentum 0.9); the
// network starts from seed 7 and batches are drawn in a shuffled order per epoch.
//
//   torch_cnn_loop BATCH BATCHES [WIDTH=8] [RECORDS=60000] [OPTIMIZER=sgd|adam]
//                  [LEARNING_RATE=0.05] [MOMENTUM=0.9] [VALIDATION_RECORDS=0] [DATA_DIR]
//
// Times the batches after the first kWarmup (20) and prints one JSON line:
// {"records_per_second": R, "batch": B, "batches": N, "loss": L, "accuracy": A}, L the mean
// training loss of the last kWarmup batches, A the accuracy on the first VALIDATION_RECORDS
// validation records after training (null for 0; not timed). With DATA_DIR, MNIST's files are
// read from it and RECORDS is ignored.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cnn_batch.h"
#include "cnn_data.h"
#include "cnn_model.h"

namespace {

constexpr uint64_t kWarmup = 20;
constexpr uint64_t kSeed = 7;

const char* Argument(int argc, char** argv, int index, const char* fallback) {
  return argc > index ? argv[index] : fallback;
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const std::string& name,
                                                       std::vector<torch::Tensor> parameters,
                                                       double learning_rate, double momentum) {
  if (name == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        parameters, torch::optim::SGDOptions(learning_rate).momentum(momentum));
  }
  if (name == "adam") {
    return std::make_unique<torch::optim::Adam>(parameters,
                                                torch::optim::AdamOptions(learning_rate));
  }
  throw std::invalid_argument("OPTIMIZER is sgd or adam, not " + name);
}

// The accuracy of `network` (in eval mode) on records [0, count) of `data` (all of them when it
// has fewer).
double Accuracy(torch_cnn::Cnn& network, const mlp::Dataset& data, uint64_t count) {
  count = std::min(count, data.size());
  if (count == 0) return 0;
  torch::NoGradGuard no_grad;
  network->eval();
  int64_t correct = 0;
  std::vector<uint64_t> indices;
  for (uint64_t first = 0; first < count; first += 256) {
    indices.resize(std::min<uint64_t>(256, count - first));
    std::iota(indices.begin(), indices.end(), first);
    auto [images, labels] = torch_cnn::Gather(data, indices.data(), indices.size());
    correct += torch_cnn::Score(network->forward(images), labels).correct.item<int64_t>();
  }
  network->train();
  return static_cast<double>(correct) / static_cast<double>(count);
}

int Run(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: torch_cnn_loop BATCH BATCHES [WIDTH=8] [RECORDS=60000] "
                 "[OPTIMIZER=sgd|adam] [LEARNING_RATE=0.05] [MOMENTUM=0.9] "
                 "[VALIDATION_RECORDS=0] [DATA_DIR]\n");
    return 2;
  }
  const uint64_t batch = std::strtoull(argv[1], nullptr, 10);
  const uint64_t batches = std::strtoull(argv[2], nullptr, 10);
  const int64_t width = std::strtoll(Argument(argc, argv, 3, "8"), nullptr, 10);
  torch_cnn::DataOptions options;
  options.synthetic_train_records = std::strtoull(Argument(argc, argv, 4, "60000"), nullptr, 10);
  const std::string optimizer_name = Argument(argc, argv, 5, "sgd");
  const double learning_rate = std::strtod(Argument(argc, argv, 6, "0.05"), nullptr);
  const double momentum = std::strtod(Argument(argc, argv, 7, "0.9"), nullptr);
  const uint64_t validation = std::strtoull(Argument(argc, argv, 8, "0"), nullptr, 10);
  options.data_dir = Argument(argc, argv, 9, "");
  options.synthetic_validation_records = validation;
  if (batch == 0 || width < 1) throw std::invalid_argument("BATCH and WIDTH must be >= 1");

  torch::set_num_threads(1);
  const torch_cnn::CnnData data = torch_cnn::OpenCnnData(options);
  torch_cnn::Cnn network = torch_cnn::MakeCnn(width, kSeed);
  network->train();
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      MakeOptimizer(optimizer_name, network->parameters(), learning_rate, momentum);

  const uint64_t records = data.training->size();
  std::vector<uint64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 shuffle(kSeed);
  std::vector<uint64_t> indices(batch);
  uint64_t next = records;  // position in `order`; a new epoch reshuffles

  double recent_loss = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  for (uint64_t b = 0; b < batches; ++b) {
    if (b == kWarmup) start = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < batch; ++i) {
      if (next == records) {
        std::shuffle(order.begin(), order.end(), shuffle);
        next = 0;
      }
      indices[i] = order[next++];
    }
    auto [images, labels] = torch_cnn::Gather(*data.training, indices.data(), batch);
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(network->forward(images), labels);
    loss.backward();
    optimizer->step();
    optimizer->zero_grad();
    if (b + kWarmup >= batches) recent_loss += loss.item<double>() / kWarmup;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t timed = batches > kWarmup ? batches - kWarmup : 0;
  const std::string accuracy =
      validation > 0 ? std::to_string(Accuracy(network, *data.validation, validation)) : "null";
  std::printf(
      "{\"records_per_second\": %.1f, \"batch\": %llu, \"batches\": %llu, \"loss\": %.6g, "
      "\"accuracy\": %s}\n",
      seconds > 0 ? static_cast<double>(timed * batch) / seconds : 0.0,
      static_cast<unsigned long long>(batch), static_cast<unsigned long long>(timed), recent_loss,
      accuracy.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_cnn_loop: %s\n", e.what());
    return 1;
  }
}
