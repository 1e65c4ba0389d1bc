// The plain-loop peer of the torch_gpt plugin: the same model (gpt_model.h's Gpt, built and
// initialized by the same MakeGpt), the same records of the same default text, and the same
// optimizer as examples/torch_gpt.yaml (Adam, PyTorch's update rule, which Cohort's built-in
// `adam` follows: betas 0.9 and 0.999, eps 1e-8, no weight decay), trained by a hand-written
// LibTorch loop with no runtime: forward, backward, torch::optim::Adam's step, zero_grad. One
// compute thread (torch::set_num_threads(1)), as the plugin uses per CPU slot. Batches are drawn
// from a shuffled order per epoch.
//
//   torch_gpt_loop [BATCH=32] [BATCHES=300] [CONTEXT=32] [EMBEDDING=64] [HEADS=4] [LAYERS=2]
//                  [LEARNING_RATE=0.003] [REPORT_EVERY=20]
//
// Times the batches after the first REPORT_EVERY (a warm-up) and prints one JSON line:
// {"records_per_second": R, "batch": B, "batches": N, "loss": L}, L the mean training loss of the
// last REPORT_EVERY batches.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <random>
#include <vector>

#include "default_text.h"
#include "gpt_model.h"

namespace {

constexpr uint64_t kSeed = 7;

uint64_t Argument(int argc, char** argv, int index, uint64_t fallback) {
  return argc > index ? std::strtoull(argv[index], nullptr, 10) : fallback;
}

int Run(int argc, char** argv) {
  const uint64_t batch = std::max<uint64_t>(1, Argument(argc, argv, 1, 32));
  const uint64_t batches = Argument(argc, argv, 2, 300);
  torch_gpt::GptOptions options;
  options.context = static_cast<int64_t>(Argument(argc, argv, 3, 32));
  options.embedding = static_cast<int64_t>(Argument(argc, argv, 4, 64));
  options.heads = static_cast<int64_t>(Argument(argc, argv, 5, 4));
  options.layers = static_cast<int64_t>(Argument(argc, argv, 6, 2));
  const double learning_rate = argc > 7 ? std::strtod(argv[7], nullptr) : 0.003;
  const uint64_t report_every = std::max<uint64_t>(1, Argument(argc, argv, 8, 20));
  torch::set_num_threads(1);

  const torch_gpt::Corpus corpus(torch_gpt::kDefaultText, options.context, "the default text");
  torch_gpt::Gpt gpt = torch_gpt::MakeGpt(options, corpus.vocabulary_size(), kSeed);
  torch::optim::Adam adam(
      gpt->parameters(),
      torch::optim::AdamOptions(learning_rate).betas({0.9, 0.999}).eps(1e-8).weight_decay(0));

  const uint64_t records = corpus.records(COHORT_SPLIT_TRAINING);
  std::vector<uint64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 shuffle(kSeed);
  std::vector<uint64_t> indices(batch);
  uint64_t next = records;  // position in `order`; a new epoch reshuffles

  double loss_sum = 0;  // over the current REPORT_EVERY batches
  double loss = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  for (uint64_t b = 0; b < batches; ++b) {
    if (b == report_every) start = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < batch; ++i) {
      if (next == records) {
        std::shuffle(order.begin(), order.end(), shuffle);
        next = 0;
      }
      indices[i] = order[next++];
    }
    const torch::Tensor batch_loss =
        torch_gpt::Loss(gpt, corpus.Windows(COHORT_SPLIT_TRAINING, indices));
    batch_loss.backward();
    adam.step();
    adam.zero_grad();
    loss_sum += batch_loss.item<double>();
    if ((b + 1) % report_every == 0) {
      loss = loss_sum / static_cast<double>(report_every);
      loss_sum = 0;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t timed = batches > report_every ? batches - report_every : 0;
  std::printf(
      "{\"records_per_second\": %.1f, \"batch\": %llu, \"batches\": %llu, "
      "\"loss\": %.6g}\n",
      seconds > 0 && timed > 0 ? static_cast<double>(timed * batch) / seconds : 0.0,
      static_cast<unsigned long long>(batch), static_cast<unsigned long long>(timed), loss);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_gpt_loop: %s\n", e.what());
    return 1;
  }
}
