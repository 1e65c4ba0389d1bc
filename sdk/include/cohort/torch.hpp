// cohort/torch.hpp -- a LibTorch module as a Cohort model, with no copy per step.
//
// Like plugin.hpp, this header is NOT part of the ABI: it compiles into the plugin, against the
// LibTorch the plugin links (Debian's 1.13 on the CPU, PyTorch 2.x's for CUDA). It needs C++17.
//
//   class Net : public cohort::Model {
//    public:
//     static constexpr uint32_t host_minor_required = 4;  // buffers are state tensors (ABI 1.4)
//     explicit Net(cohort::Host& host)
//         : Model(host), net_(torch::nn::Linear(4, 1)), module_(host, *net_) {}
//     void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
//       torch::Tensor loss = ...;              // forward on module_.device()
//       module_.backward(loss);                // gradients land in the host's arena
//       metrics.add("loss", loss.item<double>(), batch.size());
//     }
//     ...
//    private:
//     torch::nn::Linear net_;
//     cohort::TorchModule module_;
//   };
//
// TorchModule registers every parameter of the module (named_parameters(), in that order, with
// its name, dtype, shape and the trial's device) as the model's tensors, then every buffer
// (named_buffers(): BatchNorm's running statistics and its int64 batch counter) as state tensors
// (ABI 1.4), copies the module's initial values into the host's memory, and then makes each
// parameter's data and gradient, and each buffer's data, views of that memory (set_data and
// mutable_grad with tensors over it). From then on:
// - autograd adds each gradient into the arena in place (a defined gradient is accumulated with
//   `+=` when backward runs without grad mode, as LibTorch's AccumulateGrad does), the host zeroes
//   it after each optimizer step, and the host's optimizer steps the parameters where they are;
// - a post hook on each parameter's gradient accumulator reports the parameter ready to the host
//   as soon as autograd has accumulated it, so the host exchanges buckets while backward goes on
//   (the hooks may run on autograd's threads, which a 1.2 host accepts);
// - the module updates its buffers in place, each rank its own (as under DDP without buffer
//   broadcasts); the host broadcasts rank 0's when the trial starts and checkpoints them, so a
//   model needs no save_state for them;
// - check_views() throws when a parameter's data or gradient, or a buffer, is no longer its view
//   of the host's memory (after a `.to()`, an assignment to `.data`, or an optimizer's zero_grad
//   with set_to_none).
// A module with buffers needs a 1.4 host: its model class declares
// `static constexpr uint32_t host_minor_required = 4;` (a module without any runs on 1.2).
//
// The model registers no other tensor (register_tensors may be called once per model).
//
// CPU slots only, for now: on a GPU, LibTorch would enqueue the module's kernels on its own
// stream rather than the trial's (cohort_trial_context.stream), which the host orders its work
// after; a trial on a CUDA device is refused (UNIMPLEMENTED) until the binding runs the module on
// that stream.
#ifndef COHORT_TORCH_HPP_
#define COHORT_TORCH_HPP_

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <cohort/plugin.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cohort {

// The Cohort dtype of a LibTorch scalar type; throws cohort::Error for one the SDK has not (int64
// is state only: a parameter of it is refused by the host).
inline cohort_dtype CohortDtype(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return COHORT_DTYPE_FLOAT32;
    case torch::kFloat64:
      return COHORT_DTYPE_FLOAT64;
    case torch::kFloat16:
      return COHORT_DTYPE_FLOAT16;
    case torch::kBFloat16:
      return COHORT_DTYPE_BFLOAT16;
    case torch::kInt64:
      return COHORT_DTYPE_INT64;
    default:
      throw Error(COHORT_STATUS_INVALID_ARGUMENT,
                  std::string("a tensor of dtype ") + c10::toString(type) +
                      " cannot be registered; Cohort holds float32, float64, float16, bfloat16 "
                      "and (as state) int64");
  }
}

// The LibTorch device of a trial's device.
inline torch::Device TorchDevice(const cohort_device& device) {
  if (device.kind == COHORT_DEVICE_CUDA) {
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.ordinal));
  }
  return torch::Device(torch::kCPU);
}

class TorchModule {
 public:
  // Registers `module`'s parameters and buffers with `host` and moves them into the host's memory
  // (see above). The module must outlive this object, and must not be moved to another device
  // afterwards.
  TorchModule(const Host& host, torch::nn::Module& module)
      : host_(host), module_(module), device_(TorchDevice(host.context().device)) {
    if (!device_.is_cpu()) {
      throw Error(COHORT_STATUS_UNIMPLEMENTED,
                  "cohort/torch.hpp runs a module on CPU slots only for now; this trial's slot is "
                  "a GPU (train it on CPU slots, or write the plugin against plugin.hpp)");
    }
    std::vector<TensorSpec> specs;
    auto add = [&](const std::string& name, const torch::Tensor& tensor, cohort_tensor_kind kind) {
      TensorSpec spec;
      spec.name = name;
      spec.element_count = static_cast<uint64_t>(tensor.numel());
      spec.dtype = CohortDtype(tensor.scalar_type());
      for (int64_t size : tensor.sizes()) spec.shape.push_back(static_cast<uint64_t>(size));
      spec.kind = kind;
      specs.push_back(std::move(spec));
      names_.push_back(name);
      tensors_.push_back(tensor);
    };
    for (const auto& item : module_.named_parameters(/*recurse=*/true)) {
      add(item.key(), item.value(), COHORT_TENSOR_PARAMETER);
    }
    parameter_count_ = tensors_.size();
    for (const auto& item : module_.named_buffers(/*recurse=*/true)) {
      add(item.key(), item.value(), COHORT_TENSOR_STATE);
    }
    views_ = host_.register_tensors(specs);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      torch::Tensor& t = tensors_[i];
      torch::Tensor data = HostTensor(views_[i].data<void>(), t);
      data.copy_(t.detach());
      t.set_data(data);
      if (i >= parameter_count_) continue;  // a buffer: no gradient
      t.mutable_grad() = HostTensor(views_[i].grad<void>(), t);
      auto accumulator = torch::autograd::impl::grad_accumulator(t);
      accumulator->add_post_hook(std::make_unique<ReadyHook>(host_, views_[i]));
      accumulators_.push_back(std::move(accumulator));  // the parameter keeps only a weak one
    }
  }
  TorchModule(const TorchModule&) = delete;
  TorchModule& operator=(const TorchModule&) = delete;

  // Where the module computes: the trial's device.
  const torch::Device& device() const { return device_; }
  // Tensor i's name (as named_parameters(), then named_buffers(), give it) and its view of the
  // host's memory: the parameters first (parameter_count() of them), then the buffers.
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<TensorView>& views() const { return views_; }
  size_t parameter_count() const { return parameter_count_; }

  // Runs backward from the scalar `loss`: each parameter's gradient is added into the arena and
  // reported ready as autograd produces it. Checks the views first.
  void backward(const torch::Tensor& loss) const {
    check_views();
    loss.backward();
  }

  // Throws cohort::Error (FAILED_PRECONDITION, naming the tensor) when a parameter's data or
  // gradient, or a buffer, is no longer its view of the host's memory.
  void check_views() const {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const torch::Tensor& t = tensors_[i];
      const char* what = i < parameter_count_ ? "parameter" : "buffer";
      if (t.data_ptr() != views_[i].data<void>()) {
        throw Error(COHORT_STATUS_FAILED_PRECONDITION,
                    std::string(what) + " '" + names_[i] +
                        "' no longer lives in the host's memory (was the module moved with .to(), "
                        "or its .data replaced?)");
      }
      if (i >= parameter_count_) continue;
      if (!t.grad().defined() || t.grad().data_ptr() != views_[i].grad<void>()) {
        throw Error(COHORT_STATUS_FAILED_PRECONDITION,
                    "the gradient of parameter '" + names_[i] +
                        "' is no longer the host's (was it set to None, as zero_grad() does in "
                        "PyTorch 2? Cohort zeroes gradients itself)");
      }
    }
  }

 private:
  // Reports its parameter ready once autograd has accumulated the parameter's gradient.
  class ReadyHook final : public torch::autograd::FunctionPostHook {
   public:
    ReadyHook(const Host& host, const TensorView& view) : host_(host), view_(view) {}
    torch::autograd::variable_list operator()(
        const torch::autograd::variable_list& outputs,
        const torch::autograd::variable_list& /*inputs*/) override {
      host_.gradients_ready(view_);
      return outputs;
    }

   private:
    const Host& host_;
    TensorView view_;
  };

  // A tensor over `memory` (the host's) shaped and typed as `like`, on the module's device.
  torch::Tensor HostTensor(void* memory, const torch::Tensor& like) const {
    return torch::from_blob(memory, like.sizes(),
                            torch::TensorOptions().dtype(like.scalar_type()).device(device_));
  }

  const Host& host_;
  torch::nn::Module& module_;
  torch::Device device_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> tensors_;  // the parameters, then the buffers
  size_t parameter_count_ = 0;
  std::vector<TensorView> views_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
};

}  // namespace cohort

#endif  // COHORT_TORCH_HPP_
