// The torch_classifier test plugin: torch_classifier.h's LibTorch model as a Cohort model through
// cohort/torch.hpp. Hyperparameter `drop_gradient_at_batch` N (tests of the view check): before
// its N-th training batch (from 1) the first parameter's gradient is undefined, as PyTorch 2's
// zero_grad() leaves it.
#include <cohort/plugin.hpp>
#include <cohort/torch.hpp>
#include <vector>

#include "torch_classifier.h"

namespace {

class TorchClassifier : public cohort::Model {
 public:
  static constexpr uint32_t host_minor_required = 4;  // BatchNorm's buffers are state tensors

  explicit TorchClassifier(cohort::Host& host)
      : Model(host),
        network_(torch_classifier::MakeNetwork(host.context().trial_seed)),
        module_(host, *network_),
        drop_gradient_at_(host.hparam_int_or("drop_gradient_at_batch", 0)) {}

  uint64_t dataset_size(cohort_split split) override {
    return split == COHORT_SPLIT_TRAINING ? torch_classifier::kTrainingRecords
                                          : torch_classifier::kValidationRecords;
  }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    if (++batches_ == drop_gradient_at_) {
      network_->parameters()[0].mutable_grad() = torch::Tensor();
    }
    network_->train();
    auto [features, labels] = Records(batch);
    const torch::Tensor loss = torch_classifier::Loss(network_, features, labels);
    module_.backward(loss);
    metrics.add("loss", loss.item<double>(), batch.size());
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    torch::NoGradGuard no_grad;
    network_->eval();
    auto [features, labels] = Records(batch);
    metrics.add("loss", torch_classifier::Loss(network_, features, labels).item<double>(),
                batch.size());
  }

 private:
  std::pair<torch::Tensor, torch::Tensor> Records(const cohort::Batch& batch) const {
    std::vector<uint64_t> indices;
    for (uint64_t i = 0; i < batch.size(); ++i) indices.push_back(batch[i]);
    return torch_classifier::Records(indices, batch.split(), module_.device());
  }

  torch::nn::Sequential network_;
  cohort::TorchModule module_;
  int64_t drop_gradient_at_;
  int64_t batches_ = 0;
};

}  // namespace

COHORT_PLUGIN(TorchClassifier, "torch_classifier")
