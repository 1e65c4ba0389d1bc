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
#include <chrono>
#include <cohort/plugin.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "dataset.h"
#include "mlp_glue.h"
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
    tensors_ = host.register_tensors(
        LayerTensorSpecs(LayerWidths(options_, *data_.training), /*on_host_cpu=*/true));
    LayerViews views = ViewLayers(tensors_);
    params_ = std::move(views.params);
    grads_ = std::move(views.grads);
    network_.Initialize(host.context().trial_seed, views.writable);
  }

  uint64_t dataset_size(cohort_split split) override { return SplitData(data_, split).size(); }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    if (options_.slow_rank_ms > 0 &&
        options_.slow_rank == static_cast<int64_t>(host().context().rank)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.slow_rank_ms));
    }
    input_.Gather(SplitData(data_, batch.split()), batch);
    const BatchStats stats =
        network_.Train(params_, grads_, input_.inputs(), input_.labels(), batch.size(),
                       [this](size_t layer) { HandOverLayer(host(), tensors_, layer); });
    ReportBatch(stats, metrics);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    input_.Gather(SplitData(data_, batch.split()), batch);
    ReportBatch(network_.Evaluate(params_, input_.inputs(), input_.labels(), batch.size()),
                metrics);
  }

 private:
  MlpOptions options_;
  MlpDatasets data_;
  MlpNetwork network_;
  std::vector<cohort::TensorView> tensors_;  // weight and bias of each layer, in that order
  std::vector<LayerParams> params_;          // views of tensors_' data
  std::vector<LayerGrads> grads_;            // views of tensors_' gradients
  BatchInput input_;                         // the current batch, on the host
};

}  // namespace
}  // namespace mlp

COHORT_PLUGIN(mlp::MlpModel, "mlp")
