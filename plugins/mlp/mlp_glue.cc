#include "mlp_glue.h"

#include <string>

namespace mlp {

std::vector<cohort::TensorSpec> LayerTensorSpecs(const std::vector<size_t>& widths,
                                                 bool on_host_cpu) {
  std::vector<cohort::TensorSpec> specs;
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const std::string layer = "layer" + std::to_string(l);
    const uint64_t fan_in = widths[l], fan_out = widths[l + 1];
    specs.push_back({.name = layer + ".weight",
                     .element_count = fan_in * fan_out,
                     .on_host_cpu = on_host_cpu,
                     .shape = {fan_in, fan_out}});
    specs.push_back({.name = layer + ".bias",
                     .element_count = fan_out,
                     .on_host_cpu = on_host_cpu,
                     .shape = {fan_out}});
  }
  return specs;
}

LayerViews ViewLayers(const std::vector<cohort::TensorView>& tensors) {
  LayerViews views;
  for (size_t l = 0; 2 * l + 1 < tensors.size(); ++l) {
    const cohort::TensorView& weight = tensors[2 * l];
    const cohort::TensorView& bias = tensors[2 * l + 1];
    views.writable.push_back({weight.data<float>(), bias.data<float>()});
    views.params.push_back({weight.data<float>(), bias.data<float>()});
    views.grads.push_back({weight.grad<float>(), bias.grad<float>()});
  }
  return views;
}

void HandOverLayer(cohort::Host& host, const std::vector<cohort::TensorView>& tensors,
                   size_t layer) {
  host.gradients_ready(tensors[2 * layer]);
  host.gradients_ready(tensors[2 * layer + 1]);
}

const Dataset& SplitData(const MlpDatasets& data, cohort_split split) {
  if (split == COHORT_SPLIT_TRAINING) return *data.training;
  if (split == COHORT_SPLIT_VALIDATION) return *data.validation;
  throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, "unknown split " + std::to_string(split));
}

void CheckRecords(const cohort::Batch& batch, uint64_t records) {
  for (uint64_t i = 0; i < batch.size(); ++i) {
    if (batch[i] >= records) {
      throw cohort::Error(COHORT_STATUS_OUT_OF_RANGE, "record " + std::to_string(batch[i]) +
                                                          " is outside the split's " +
                                                          std::to_string(records) + " records");
    }
  }
}

void BatchInput::Gather(const Dataset& data, const cohort::Batch& batch) {
  CheckRecords(batch, data.size());
  inputs_.resize(batch.size() * data.input_size());
  labels_.resize(batch.size());
  for (uint64_t i = 0; i < batch.size(); ++i) {
    labels_[i] = data.Read(batch[i], inputs_.data() + i * data.input_size());
  }
}

void ReportBatch(const BatchStats& stats, cohort::Metrics& metrics) {
  metrics.add("loss", stats.mean_loss(), stats.records);
  metrics.add("accuracy", stats.accuracy(), stats.records);
}

}  // namespace mlp
