// The torch_gpt example plugin: gpt_model.h's character-level transformer as a Cohort model
// through cohort/torch.hpp, on CPU slots, or on GPU slots when built against a LibTorch with CUDA
// (scripts/build-torch-plugins).
//
// Hyperparameters (all optional):
//   context, embedding, heads, layers   the model's size (GptOptions; 32, 64, 4, 2)
//   data_path                           a text file to learn; default: default_text.h's text
//   threads                             LibTorch's compute threads in this worker process
//                                       (default 1: a CPU slot is one core, as torchrun's
//                                       OMP_NUM_THREADS=1 makes it)
// Initial values come from torch::manual_seed(trial_seed). Metrics: `loss` (the mean
// next-character cross-entropy) in training and validation, and `accuracy` (the fraction of
// next characters the model ranks first) in validation. The module has no buffers, so the model
// has no state of its own: parameters and optimizer state are the host's.
#include <torch/torch.h>

#include <cohort/plugin.hpp>
#include <cohort/torch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "default_text.h"
#include "gpt_model.h"

namespace {

torch_gpt::GptOptions ReadOptions(const cohort::Host& host) {
  torch_gpt::GptOptions options;
  options.context = host.hparam_int_or("context", options.context);
  options.embedding = host.hparam_int_or("embedding", options.embedding);
  options.heads = host.hparam_int_or("heads", options.heads);
  options.layers = host.hparam_int_or("layers", options.layers);
  torch_gpt::Validate(options);
  return options;
}

// The text of `data_path`, or the default text when it is not set.
torch_gpt::Corpus ReadCorpus(const cohort::Host& host, int64_t context) {
  if (!host.has_hparam("data_path")) {
    return torch_gpt::Corpus(torch_gpt::kDefaultText, context, "the default text");
  }
  const std::string path = host.hparam_string("data_path");
  return torch_gpt::Corpus(torch_gpt::ReadText(path), context, "data_path '" + path + "'");
}

// Sets LibTorch's thread count before the model is built; returns the count.
int64_t SetThreads(const cohort::Host& host) {
  const int64_t threads = host.hparam_int_or("threads", 1);
  if (threads < 1 || threads > 1024) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "threads: expected 1 .. 1024; got " + std::to_string(threads));
  }
  torch::set_num_threads(static_cast<int>(threads));
  return threads;
}

class TorchGpt : public cohort::Model {
 public:
  // TorchModule reports gradients ready from autograd's hooks, which may run on autograd's
  // threads (ABI 1.2), and hands a GPU's metrics over on the device (ABI 1.3). The module has no
  // buffers, so it needs nothing later.
  static constexpr uint32_t host_minor_required = 3;

  explicit TorchGpt(cohort::Host& host)
      : Model(host),
        threads_(SetThreads(host)),
        options_(ReadOptions(host)),
        corpus_(ReadCorpus(host, options_.context)),
        network_(
            torch_gpt::MakeGpt(options_, corpus_.vocabulary_size(), host.context().trial_seed)),
        module_(host, *network_) {
    host.info("torch_gpt: " + std::to_string(corpus_.vocabulary_size()) + " characters, " +
              std::to_string(corpus_.records(COHORT_SPLIT_TRAINING)) + " training and " +
              std::to_string(corpus_.records(COHORT_SPLIT_VALIDATION)) + " validation records, " +
              std::to_string(threads_) + " thread(s)");
  }

  uint64_t dataset_size(cohort_split split) override { return corpus_.records(split); }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    if (batch.size() == 0) {
      metrics.add("loss", 0.0, 0);
      return;
    }
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    const torch::Tensor loss = torch_gpt::Loss(network_, Windows(batch));
    module_.backward(loss);
    module_.add_metric(metrics, "loss", loss, batch.size());
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    if (batch.size() == 0) {
      metrics.add("loss", 0.0, 0);
      metrics.add("accuracy", 0.0, 0);
      return;
    }
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    torch::NoGradGuard no_grad;
    const torch::Tensor windows = Windows(batch);
    const torch::Tensor logits = network_->forward(torch_gpt::Inputs(windows));
    const torch::Tensor targets = torch_gpt::Targets(windows);
    module_.add_metric(metrics, "loss", torch_gpt::CrossEntropy(logits, targets), batch.size());
    module_.add_metric(metrics, "accuracy", torch_gpt::Accuracy(logits, targets), batch.size());
  }

 private:
  torch::Tensor Windows(const cohort::Batch& batch) const {
    std::vector<uint64_t> records;
    records.reserve(batch.size());
    for (uint64_t i = 0; i < batch.size(); ++i) records.push_back(batch[i]);
    return corpus_.Windows(batch.split(), records).to(module_.device());
  }

  int64_t threads_;
  torch_gpt::GptOptions options_;
  torch_gpt::Corpus corpus_;
  torch_gpt::Gpt network_;
  cohort::TorchModule module_;
};

}  // namespace

COHORT_PLUGIN(TorchGpt, "torch_gpt")
