// mlp_cuda_plugin.cc -- the MLP example on a CUDA GPU, as a Cohort model plugin ("mlp_cuda").
//
// The same model, hyperparameters, data and initialization as the "mlp" plugin, but its tensors
// live in the runtime's arena on the trial's GPU and every pass runs on the stream Cohort hands
// the plugin (cohort_trial_context.stream): cuBLAS products and small kernels
// (cuda_mlp_network.h). A split small enough is read once and kept on the GPU, so a batch is
// gathered there from its indices (device_dataset.h); a larger one is read on the host per batch
// and copied over. A layer's gradients are handed to the exchange as soon as their kernels are
// enqueued, so Cohort exchanges them while the layers below are still computed. The loss and
// accuracy are reported where the device computes them (metric_add_device), so no batch waits
// for the device.
//
// It needs a GPU slot: `cohort run --gpus`, or an agent with GPUs. On a CPU slot it refuses to
// start, saying so.
#include <cuda_runtime_api.h>

#include <cohort/plugin.hpp>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_mlp_network.h"
#include "dataset.h"
#include "device_dataset.h"
#include "mlp_cuda_kernels.h"
#include "mlp_glue.h"
#include "mlp_options.h"

namespace mlp {
namespace {

// The trial's stream, refusing a trial that is not on a GPU.
cudaStream_t StreamOf(const cohort::Host& host) {
  const cohort_trial_context& context = host.context();
  if (context.device.kind != COHORT_DEVICE_CUDA || context.stream == nullptr) {
    throw cohort::Error(COHORT_STATUS_FAILED_PRECONDITION,
                        "mlp_cuda trains on a GPU, but this trial's slot is not one; use "
                        "`cohort run --gpus` (or an agent with GPUs), or the mlp plugin on CPUs");
  }
  return reinterpret_cast<cudaStream_t>(context.stream);
}

class MlpCudaModel : public cohort::Model {
 public:
  explicit MlpCudaModel(cohort::Host& host)
      : Model(host),
        options_(ReadMlpOptions(host)),
        data_(OpenDatasets(options_)),
        network_(LayerWidths(options_, *data_.training), StreamOf(host)) {
    tensors_ = host.register_tensors(
        LayerTensorSpecs(LayerWidths(options_, *data_.training), /*on_host_cpu=*/false));
    LayerViews views = ViewLayers(tensors_);
    params_ = std::move(views.params);
    grads_ = std::move(views.grads);
    Guarded([&] {
      network_.Initialize(host.context().trial_seed, views.writable);
      const cudaStream_t stream = StreamOf(host);
      if (DeviceDataset::Fits(*data_.training)) {
        on_device_training_ = std::make_unique<DeviceDataset>(*data_.training, stream);
      }
      if (data_.validation && DeviceDataset::Fits(*data_.validation)) {
        on_device_validation_ = std::make_unique<DeviceDataset>(*data_.validation, stream);
      }
    });
  }

  uint64_t dataset_size(cohort_split split) override { return SplitData(data_, split).size(); }

  // The loss and accuracy stay on the device (metric_add_device, ABI 1.3).
  static constexpr uint32_t host_minor_required = 3;

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    const auto hand_over = [this](size_t layer) { HandOverLayer(host(), tensors_, layer); };
    Guarded([&] { network_.Train(params_, grads_, OnTheDevice(batch), hand_over); });
    ReportOnDevice(batch, metrics);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    Guarded([&] { network_.Evaluate(params_, OnTheDevice(batch)); });
    ReportOnDevice(batch, metrics);
  }

 private:
  // The batch's records on the device: gathered there when its split is held there, else read
  // on the host (which also refuses an unknown split) and copied over.
  CudaMlpNetwork::DeviceBatch OnTheDevice(const cohort::Batch& batch) {
    if (batch.split() == COHORT_SPLIT_TRAINING && on_device_training_) {
      return on_device_training_->Gather(batch);
    }
    if (batch.split() == COHORT_SPLIT_VALIDATION && on_device_validation_) {
      return on_device_validation_->Gather(batch);
    }
    input_.Gather(SplitData(data_, batch.split()), batch);
    return network_.CopyIn(input_.inputs(), input_.labels(), batch.size());
  }

  // The batch's loss and accuracy as the device computes them, read by the host when it reports.
  void ReportOnDevice(const cohort::Batch& batch, cohort::Metrics& metrics) const {
    metrics.add_on_device("loss", network_.device_totals() + kMeanLoss, batch.size());
    metrics.add_on_device("accuracy", network_.device_totals() + kAccuracy, batch.size());
  }

  // Runs `work`, turning a CUDA or cuBLAS failure into the plugin's error; the plugin's own
  // errors (a record outside the split) pass as they are.
  template <class Work>
  static void Guarded(Work work) {
    try {
      work();
    } catch (const cohort::Error&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw cohort::Error(COHORT_STATUS_INTERNAL, std::string("mlp_cuda: ") + e.what());
    }
  }

  MlpOptions options_;
  MlpDatasets data_;
  CudaMlpNetwork network_;
  std::vector<cohort::TensorView> tensors_;  // weight and bias of each layer, in that order
  std::vector<LayerParams> params_;          // device views of tensors_' data
  std::vector<LayerGrads> grads_;            // device views of tensors_' gradients
  BatchInput input_;                         // the current batch, on the host
  std::unique_ptr<DeviceDataset> on_device_training_;  // see OnTheDevice
  std::unique_ptr<DeviceDataset> on_device_validation_;
};

}  // namespace
}  // namespace mlp

COHORT_PLUGIN(mlp::MlpCudaModel, "mlp_cuda")
