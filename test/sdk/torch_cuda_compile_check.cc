// Compiles cohort/torch.hpp's GPU path (COHORT_TORCH_CUDA) in CI, where the LibTorch at hand has
// no CUDA library to link: this object is built and never linked or run. The path runs on a GPU
// machine, built against PyTorch's LibTorch by scripts/build-torch-plugins (docs/gpu.md).
#ifndef COHORT_TORCH_CUDA
#error "this file checks the COHORT_TORCH_CUDA path of cohort/torch.hpp; build it with that defined"
#endif

#include <cohort/plugin.hpp>
#include <cohort/torch.hpp>

namespace cohort_torch_cuda_check {

// A model that uses every part of the GPU path: the stream scope, backward's stream check and
// metrics left on the device.
class LinearModel : public cohort::Model {
 public:
  static constexpr uint32_t host_minor_required = 3;
  explicit LinearModel(cohort::Host& host)
      : Model(host), linear_(torch::nn::Linear(4, 1)), module_(host, *linear_) {}

  uint64_t dataset_size(cohort_split /*split*/) override { return 16; }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    const torch::Tensor inputs =
        torch::ones({static_cast<int64_t>(batch.size()), 4}, torch::device(module_.device()));
    const torch::Tensor loss = linear_->forward(inputs).square().mean();
    module_.backward(loss);
    module_.add_metric(metrics, "loss", loss, batch.size());
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    const cohort::TorchModule::StreamScope scope = module_.on_stream();
    torch::NoGradGuard no_grad;
    module_.add_metric(metrics, "loss", torch::zeros({}, torch::device(module_.device())),
                       batch.size());
  }

 private:
  torch::nn::Linear linear_;
  cohort::TorchModule module_;
};

}  // namespace cohort_torch_cuda_check

COHORT_PLUGIN(cohort_torch_cuda_check::LinearModel, "torch_cuda_compile_check")
