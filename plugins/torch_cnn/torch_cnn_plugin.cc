// The torch_cnn example plugin: cnn_model.h's small ResNet as a Cohort model through
// cohort/torch.hpp, on cnn_data.h's images (MNIST's files, or synthetic shapes).
//
// Hyperparameters, all optional (a value out of range or of the wrong type is an error naming it):
//   width (int, 8)                              channels of the stem and first block (cnn_model.h)
//   data_dir (string)                           read MNIST's four uncompressed IDX files here...
//   synthetic_train_records (int, 60000)        ...or, without data_dir, use this many synthetic
//   synthetic_validation_records (int, 10000)      shapes per split
//   threads (int, 1)                            LibTorch's compute threads in this worker process
//                                               (a CPU slot is one core, as torchrun's
//                                               OMP_NUM_THREADS=1 makes it)
//   records_on_device (bool; true on a GPU,     read every record once at the start and keep
//     false on a CPU)                           them where the network computes, each batch
//                                               gathered there by index (the same values: a
//                                               synthetic shape takes tens of microseconds to
//                                               draw, which a GPU step would otherwise wait for;
//                                               60,000 records are 188 MB of float32 pixels)
// The runtime's optimizer steps the parameters (hyperparameters `optimizer`, `learning_rate`, ...).
//
// Tensors: the network's parameters, in named_parameters() order (cnn_model.h), float32 on the
// trial's device (a GPU slot needs the plugin built with CUDA: scripts/build-torch-plugins).
// Metrics of both splits: "loss" (mean cross-entropy) and "accuracy". BatchNorm runs in train mode
// (the batch's statistics, updating the running ones) in train_batch and in eval mode (the running
// statistics) in evaluate_batch; at several slots each slot normalises over its own share of the
// batch, as under PyTorch DDP without SyncBatchNorm. The model keeps no state of its own (no
// save_state/load_state): the running statistics are the module's buffers, which cohort/torch.hpp
// registers as the runtime's state tensors (checkpointed, and broadcast from rank 0 at the start).
#include <cohort/plugin.hpp>
#include <cohort/torch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cnn_batch.h"
#include "cnn_data.h"
#include "cnn_model.h"

namespace torch_cnn {
namespace {

// The int hyperparameter `name`, or `fallback` when absent; at least `minimum`.
int64_t IntAtLeast(const cohort::Host& host, std::string_view name, int64_t fallback,
                   int64_t minimum) {
  const int64_t value = host.hparam_int_or(name, fallback);
  if (value < minimum) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "hyperparameter '" + std::string(name) + "' must be at least " +
                            std::to_string(minimum) + ", got " + std::to_string(value));
  }
  return value;
}

DataOptions ReadDataOptions(const cohort::Host& host) {
  DataOptions o;
  o.data_dir = host.hparam_string_or("data_dir", "");
  o.synthetic_train_records = static_cast<uint64_t>(IntAtLeast(
      host, "synthetic_train_records", static_cast<int64_t>(o.synthetic_train_records), 1));
  o.synthetic_validation_records =
      static_cast<uint64_t>(IntAtLeast(host, "synthetic_validation_records",
                                       static_cast<int64_t>(o.synthetic_validation_records), 0));
  return o;
}

// Sets LibTorch's thread count before the model is built; returns the count.
int64_t SetThreads(const cohort::Host& host) {
  const int64_t threads = IntAtLeast(host, "threads", 1, 1);
  torch::set_num_threads(static_cast<int>(threads));
  return threads;
}

class TorchCnn : public cohort::Model {
 public:
  static constexpr uint32_t host_minor_required = 4;  // BatchNorm's buffers are state tensors

  explicit TorchCnn(cohort::Host& host)
      : Model(host),
        threads_(SetThreads(host)),
        data_(OpenCnnData(ReadDataOptions(host))),
        network_(MakeCnn(IntAtLeast(host, "width", 8, 1), host.context().trial_seed)),
        module_(host, *network_) {
    if (module_.device().is_cuda()) {
      // The same convolution algorithms every run, none adding with atomics: a trial resumed
      // from a checkpoint then ends with the bits of one never stopped, as on the CPU.
      at::globalContext().setBenchmarkCuDNN(false);
      at::globalContext().setDeterministicCuDNN(true);
    }
    if (host.hparam_bool_or("records_on_device", module_.device().is_cuda())) {
      const cohort::TorchModule::StreamScope scope = module_.on_stream();
      resident_training_.emplace(*data_.training, module_.device());
      resident_validation_.emplace(*data_.validation, module_.device());
    }
    int64_t parameters = 0;
    for (const torch::Tensor& p : network_->parameters()) parameters += p.numel();
    host.info("torch_cnn: " + std::to_string(parameters) + " parameters; " +
              (host.has_hparam("data_dir") ? "MNIST" : "synthetic shapes") + ", " +
              std::to_string(data_.training->size()) + " training and " +
              std::to_string(data_.validation->size()) + " validation records" +
              (!resident_training_          ? ""
               : module_.device().is_cuda() ? " kept on the GPU"
                                            : " kept in memory") +
              "; " + std::to_string(threads_) + " thread(s)");
  }

  uint64_t dataset_size(cohort_split split) override { return data_.split(split).size(); }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    network_->train();
    auto [images, labels] = Records(batch);
    const BatchResult result = Score(network_->forward(images), labels);
    module_.backward(result.loss);
    Report(result, batch, metrics);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    torch::NoGradGuard no_grad;
    network_->eval();
    auto [images, labels] = Records(batch);
    Report(Score(network_->forward(images), labels), batch, metrics);
  }

 private:
  // The batch's images and labels, on the trial's device.
  std::pair<torch::Tensor, torch::Tensor> Records(const cohort::Batch& batch) const {
    const std::optional<ResidentRecords>& resident =
        batch.split() == COHORT_SPLIT_TRAINING ? resident_training_ : resident_validation_;
    if (resident) return resident->Batch(batch.raw->record_indices, batch.size());
    auto [images, labels] =
        Gather(data_.split(batch.split()), batch.raw->record_indices, batch.size());
    if (module_.device().is_cpu()) return {images, labels};
    return {images.to(module_.device()), labels.to(module_.device())};
  }

  // The batch's loss and accuracy, left on the device on a GPU (TorchModule::add_metric).
  void Report(const BatchResult& result, const cohort::Batch& batch, cohort::Metrics& metrics) {
    module_.add_metric(metrics, "loss", result.loss, batch.size());
    module_.add_metric(metrics, "accuracy",
                       result.correct.to(torch::kFloat64) / static_cast<double>(batch.size()),
                       batch.size());
  }

  int64_t threads_;
  CnnData data_;
  Cnn network_;
  cohort::TorchModule module_;
  std::optional<ResidentRecords> resident_training_;  // with records_on_device
  std::optional<ResidentRecords> resident_validation_;
};

}  // namespace
}  // namespace torch_cnn

COHORT_PLUGIN(torch_cnn::TorchCnn, "torch_cnn")
