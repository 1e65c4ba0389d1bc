// cohort/torch.hpp -- a LibTorch module as a Cohort model, with no copy per step.
//
// Like plugin.hpp, this header is NOT part of the ABI: it compiles into the plugin, against the
// LibTorch the plugin links (Debian's 1.13 on the CPU, PyTorch 2.x's for CUDA). It needs C++17.
//
//   class Net : public cohort::Model {
//    public:
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
// its name, dtype, shape and the trial's device) as the model's tensors, copies the module's
// initial values into the host's arena, and then makes each parameter's data and gradient views
// of the arena (set_data and mutable_grad with tensors over the host's memory). From then on:
// - autograd adds each gradient into the arena in place (a defined gradient is accumulated with
//   `+=` when backward runs without grad mode, as LibTorch's AccumulateGrad does), the host zeroes
//   it after each optimizer step, and the host's optimizer steps the parameters where they are;
// - a post hook on each parameter's gradient accumulator reports the parameter ready to the host
//   as soon as autograd has accumulated it, so the host exchanges buckets while backward goes on
//   (the hooks may run on autograd's threads: a model whose backward runs on a GPU declares
//   `static constexpr uint32_t host_minor_required = 2;`, see plugin.hpp);
// - check_views() throws when a parameter's data or gradient is no longer its arena view (after
//   a `.to()`, an assignment to `.data`, or an optimizer's zero_grad with set_to_none).
// The module's buffers (BatchNorm's running statistics) are not gradients and not registered:
// save_buffers and load_buffers write them into and read them from the model's state, so
// checkpoints hold them (call them from save_state and load_state).
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

// The Cohort dtype of a LibTorch scalar type; throws cohort::Error for one the SDK has not.
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
    default:
      throw Error(COHORT_STATUS_INVALID_ARGUMENT,
                  std::string("a parameter of dtype ") + c10::toString(type) +
                      " cannot be registered; Cohort holds float32, float64, float16 and bfloat16");
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
  // Registers `module`'s parameters with `host` and moves them into the arena (see above). The
  // module must outlive this object, and must not be moved to another device afterwards.
  TorchModule(const Host& host, torch::nn::Module& module)
      : host_(host), module_(module), device_(TorchDevice(host.context().device)) {
    if (!device_.is_cpu()) {
      throw Error(COHORT_STATUS_UNIMPLEMENTED,
                  "cohort/torch.hpp runs a module on CPU slots only for now; this trial's slot is "
                  "a GPU (train it on CPU slots, or write the plugin against plugin.hpp)");
    }
    const auto named = module_.named_parameters(/*recurse=*/true);
    std::vector<TensorSpec> specs;
    for (const auto& item : named) {
      const torch::Tensor& p = item.value();
      TensorSpec spec;
      spec.name = item.key();
      spec.element_count = static_cast<uint64_t>(p.numel());
      spec.dtype = CohortDtype(p.scalar_type());
      for (int64_t size : p.sizes()) spec.shape.push_back(static_cast<uint64_t>(size));
      specs.push_back(std::move(spec));
      names_.push_back(item.key());
      parameters_.push_back(p);
    }
    views_ = host_.register_tensors(specs);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      torch::Tensor& p = parameters_[i];
      torch::Tensor data = ArenaTensor(views_[i].data<void>(), p);
      data.copy_(p.detach());
      p.set_data(data);
      p.mutable_grad() = ArenaTensor(views_[i].grad<void>(), p);
      auto accumulator = torch::autograd::impl::grad_accumulator(p);
      accumulator->add_post_hook(std::make_unique<ReadyHook>(host_, views_[i]));
      accumulators_.push_back(std::move(accumulator));  // the parameter keeps only a weak one
    }
  }
  TorchModule(const TorchModule&) = delete;
  TorchModule& operator=(const TorchModule&) = delete;

  // Where the module computes: the trial's device.
  const torch::Device& device() const { return device_; }
  // Parameter i's name (as named_parameters() gives it) and its arena view.
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<TensorView>& views() const { return views_; }

  // Runs backward from the scalar `loss`: each parameter's gradient is added into the arena and
  // reported ready as autograd produces it. Checks the views first.
  void backward(const torch::Tensor& loss) const {
    check_views();
    loss.backward();
  }

  // Throws cohort::Error (FAILED_PRECONDITION, naming the parameter) when a parameter's data or
  // gradient is no longer its arena view.
  void check_views() const {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const torch::Tensor& p = parameters_[i];
      if (p.data_ptr() != views_[i].data<void>()) {
        throw Error(COHORT_STATUS_FAILED_PRECONDITION,
                    "parameter '" + names_[i] +
                        "' no longer lives in the host's arena (was the module moved with .to(), "
                        "or its .data replaced?)");
      }
      if (!p.grad().defined() || p.grad().data_ptr() != views_[i].grad<void>()) {
        throw Error(COHORT_STATUS_FAILED_PRECONDITION,
                    "the gradient of parameter '" + names_[i] +
                        "' is no longer the host's (was it set to None, as zero_grad() does in "
                        "PyTorch 2? Cohort zeroes gradients itself)");
      }
    }
  }

  // The module's buffers, in named_buffers() order: their count, then each one's element count
  // and bytes (moved to the host for writing).
  void save_buffers(Writer& writer) const {
    const auto buffers = module_.named_buffers(/*recurse=*/true);
    writer.write_value(static_cast<uint64_t>(buffers.size()));
    for (const auto& item : buffers) {
      const torch::Tensor host = item.value().detach().to(torch::kCPU).contiguous();
      writer.write_value(static_cast<uint64_t>(host.numel()));
      writer.write(host.data_ptr(), host.numel() * host.element_size());
    }
  }

  // Reads what save_buffers wrote into the module's buffers; throws cohort::Error DATA_LOSS when
  // the counts or sizes do not match the module.
  void load_buffers(Reader& reader) {
    auto buffers = module_.named_buffers(/*recurse=*/true);
    if (reader.read_value<uint64_t>() != buffers.size()) {
      throw Error(COHORT_STATUS_DATA_LOSS, "the saved state holds another number of buffers");
    }
    torch::NoGradGuard no_grad;
    for (auto& item : buffers) {
      torch::Tensor& buffer = item.value();
      if (reader.read_value<uint64_t>() != static_cast<uint64_t>(buffer.numel())) {
        throw Error(COHORT_STATUS_DATA_LOSS,
                    "the saved buffer '" + item.key() + "' has another size than the module's");
      }
      torch::Tensor host = torch::empty(buffer.sizes(), buffer.options().device(torch::kCPU));
      reader.read(host.data_ptr(), host.numel() * host.element_size());
      buffer.copy_(host);
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
  torch::Tensor ArenaTensor(void* memory, const torch::Tensor& like) const {
    return torch::from_blob(memory, like.sizes(),
                            torch::TensorOptions().dtype(like.scalar_type()).device(device_));
  }

  const Host& host_;
  torch::nn::Module& module_;
  torch::Device device_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> parameters_;
  std::vector<TensorView> views_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
};

}  // namespace cohort

#endif  // COHORT_TORCH_HPP_
