// mlp_glue.h -- what both MLP plugins (mlp on the CPU, mlp_cuda on a GPU) do around their
// network: register each layer's weight and bias, view them as the network's buffers, hand a
// layer's gradients over, pick a split's dataset, read a batch's records into host arrays and
// report its metrics ("loss": mean cross-entropy, "accuracy").
#ifndef COHORT_PLUGINS_MLP_MLP_GLUE_H_
#define COHORT_PLUGINS_MLP_MLP_GLUE_H_

#include <cohort/plugin.hpp>
#include <cstdint>
#include <vector>

#include "dataset.h"
#include "mlp_network.h"
#include "mlp_options.h"

namespace mlp {

// Tensors, in registration order: layer0.weight [fan_in, fan_out], layer0.bias [fan_out],
// layer1.weight, ... for the layers of `widths` ({inputs, hidden..., classes}); on the host CPU
// when `on_host_cpu`, else on the trial's device.
std::vector<cohort::TensorSpec> LayerTensorSpecs(const std::vector<size_t>& widths,
                                                 bool on_host_cpu);

// The registered layer tensors as the network's buffers: parameters to write (initialization),
// parameters to read, gradients.
struct LayerViews {
  std::vector<LayerBuffers<float>> writable;
  std::vector<LayerParams> params;
  std::vector<LayerGrads> grads;
};
LayerViews ViewLayers(const std::vector<cohort::TensorView>& tensors);

// Tells the host that layer `layer`'s weight and bias gradients are final.
void HandOverLayer(cohort::Host& host, const std::vector<cohort::TensorView>& tensors,
                   size_t layer);

// The dataset of `split` (throws cohort::Error INVALID_ARGUMENT for another split).
const Dataset& SplitData(const MlpDatasets& data, cohort_split split);

// The records of one batch as host arrays: inputs (records x input_size) and labels.
// Throws cohort::Error OUT_OF_RANGE naming the first record of `batch` outside a split of
// `records` records.
void CheckRecords(const cohort::Batch& batch, uint64_t records);

class BatchInput {
 public:
  // Reads `batch`'s records from `data` (throws cohort::Error OUT_OF_RANGE for a record
  // outside it).
  void Gather(const Dataset& data, const cohort::Batch& batch);

  const float* inputs() const { return inputs_.data(); }
  const int32_t* labels() const { return labels_.data(); }

 private:
  std::vector<float> inputs_;
  std::vector<int32_t> labels_;
};

// Adds the batch's "loss" and "accuracy" to `metrics`, weighted by its records.
void ReportBatch(const BatchStats& stats, cohort::Metrics& metrics);

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_MLP_GLUE_H_
