// mlp_plugin.cc -- the MLP example as a Cohort model plugin.
//
// This file is all the glue a model needs: register the parameters with the host, initialise them
// from the trial seed, and on each batch gather the records, run the network on the host's
// memory, and report metrics. The network and the data know nothing of Cohort.
//
// Tensors, in registration order: layer0.weight, layer0.bias, layer1.weight, ... (float32, on the
// CPU whatever the trial's device, since the network computes on the CPU). A weight has the shape
// [fan_in, fan_out] (row-major, row k holding input k's outgoing weights, see mlp_network.h), a
// bias [fan_out]. Metrics of both splits: "loss" (mean cross-entropy) and "accuracy".
#include <cohort/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dataset.h"
#include "mlp_network.h"
#include "mlp_options.h"

namespace mlp {
namespace {

class MlpModel : public cohort::Model {
 public:
  explicit MlpModel(cohort::Host& host)
      : Model(host),
        options_(ReadMlpOptions(host)),
        data_(OpenDatasets(options_)),
        network_(LayerWidths(options_, *data_.training)) {
    std::vector<cohort::TensorSpec> specs;
    for (size_t l = 0; l < network_.layer_count(); ++l) {
      const std::string layer = "layer" + std::to_string(l);
      specs.push_back({.name = layer + ".weight", .element_count = network_.weight_count(l),
                       .on_host_cpu = true, .shape = {network_.fan_in(l), network_.fan_out(l)}});
      specs.push_back({.name = layer + ".bias", .element_count = network_.fan_out(l),
                       .on_host_cpu = true, .shape = {network_.fan_out(l)}});
    }
    tensors_ = host.register_tensors(specs);

    std::vector<LayerBuffers<float>> writable;
    for (size_t l = 0; l < network_.layer_count(); ++l) {
      const cohort::TensorView& weight = tensors_[2 * l];
      const cohort::TensorView& bias = tensors_[2 * l + 1];
      writable.push_back({weight.data<float>(), bias.data<float>()});
      params_.push_back({weight.data<float>(), bias.data<float>()});
      grads_.push_back({weight.grad<float>(), bias.grad<float>()});
    }
    network_.Initialize(host.context().trial_seed, writable);
  }

  uint64_t dataset_size(cohort_split split) override { return Data(split).size(); }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    Gather(batch);
    const BatchStats stats =
        network_.Train(params_, grads_, inputs_.data(), labels_.data(), batch.size(),
                       [this](size_t layer) {  // its weight and bias are final: hand them over
                         const auto weight = static_cast<uint32_t>(2 * layer);
                         host().gradients_ready(tensors_[weight]);
                         host().gradients_ready(tensors_[weight + 1]);
                       });
    Report(stats, metrics);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    Gather(batch);
    Report(network_.Evaluate(params_, inputs_.data(), labels_.data(), batch.size()), metrics);
  }

 private:
  const Dataset& Data(cohort_split split) const {
    if (split == COHORT_SPLIT_TRAINING) return *data_.training;
    if (split == COHORT_SPLIT_VALIDATION) return *data_.validation;
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, "unknown split " + std::to_string(split));
  }

  // Reads the batch's records into inputs_ and labels_.
  void Gather(const cohort::Batch& batch) {
    const Dataset& data = Data(batch.split());
    inputs_.resize(batch.size() * data.input_size());
    labels_.resize(batch.size());
    for (uint64_t i = 0; i < batch.size(); ++i) {
      if (batch[i] >= data.size()) {
        throw cohort::Error(COHORT_STATUS_OUT_OF_RANGE,
                            "record " + std::to_string(batch[i]) + " is outside the split's " +
                                std::to_string(data.size()) + " records");
      }
      labels_[i] = data.Read(batch[i], inputs_.data() + i * data.input_size());
    }
  }

  static void Report(const BatchStats& stats, cohort::Metrics& metrics) {
    metrics.add("loss", stats.mean_loss(), stats.records);
    metrics.add("accuracy", stats.accuracy(), stats.records);
  }

  MlpOptions options_;
  MlpDatasets data_;
  MlpNetwork network_;
  std::vector<cohort::TensorView> tensors_;  // weight and bias of each layer, in that order
  std::vector<LayerParams> params_;          // views of tensors_' data
  std::vector<LayerGrads> grads_;            // views of tensors_' gradients
  std::vector<float> inputs_;                // the current batch: records x input_size
  std::vector<int32_t> labels_;
};

}  // namespace
}  // namespace mlp

COHORT_PLUGIN(mlp::MlpModel, "mlp")
