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
//       const auto scope = module_.on_stream(); // the trial's GPU stream (nothing on a CPU)
//       torch::Tensor loss = ...;              // forward on module_.device()
//       module_.backward(loss);                // gradients land in the host's arena
//       module_.add_metric(metrics, "loss", loss, batch.size());
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
// On a GPU slot the module computes on the trial's device and stream
// (cohort_trial_context.stream), the stream the host orders its own work after. The host may call
// a model from different threads, and LibTorch's current stream belongs to the thread, so each
// train_batch and evaluate_batch opens a scope first:
//
//     void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
//       const cohort::TorchModule::StreamScope scope = module_.on_stream();
//       ...                                    // forward, module_.backward(loss), metrics
//     }
//
// Autograd runs each backward kernel on its forward kernel's stream, so the gradients are
// accumulated on the trial's stream too, and a hook's report of one orders the host's exchange
// after it without waiting. backward() throws when the scope is missing. add_metric() hands the
// host a metric that is still on the device (ABI 1.3), so no batch waits for the GPU to report
// its loss. On CPU slots on_stream() does nothing and add_metric() reads the value at once.
//
// The GPU path needs a LibTorch built with CUDA (PyTorch 2.x's, from pip) and a plugin compiled
// with COHORT_TORCH_CUDA defined and linked with torch_cuda and c10_cuda
// (scripts/build-torch-plugins does both). A plugin built without it refuses a GPU slot
// (UNIMPLEMENTED) and says so.
#ifndef COHORT_TORCH_HPP_
#define COHORT_TORCH_HPP_

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#ifdef COHORT_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <cohort/plugin.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // While it lives, LibTorch's current device and stream on this thread are the trial's (on a GPU
  // slot; on the CPU it does nothing). Made by on_stream(); neither copied nor moved.
  class StreamScope {
   public:
    StreamScope(const StreamScope&) = delete;
    StreamScope& operator=(const StreamScope&) = delete;
    ~StreamScope() {}  // user-provided, so that a scope held only for its lifetime is "used"

   private:
    friend class TorchModule;
    StreamScope() = default;
#ifdef COHORT_TORCH_CUDA
    explicit StreamScope(const c10::cuda::CUDAStream& stream) { guard_.emplace(stream); }
    std::optional<c10::cuda::CUDAStreamGuard> guard_;
#endif
  };

  // Registers `module`'s parameters and buffers with `host` and moves them into the host's memory
  // (see above). The module must outlive this object, and must not be moved to another device
  // afterwards.
  TorchModule(const Host& host, torch::nn::Module& module)
      : host_(host), module_(module), device_(TorchDevice(host.context().device)) {
#ifdef COHORT_TORCH_CUDA
    if (device_.is_cuda()) {
      stream_.emplace(c10::cuda::getStreamFromExternal(
          static_cast<cudaStream_t>(static_cast<void*>(host.context().stream)), device_.index()));
    }
#else
    if (!device_.is_cpu()) {
      throw Error(COHORT_STATUS_UNIMPLEMENTED,
                  "this plugin was built against cohort/torch.hpp without COHORT_TORCH_CUDA, so "
                  "it runs on CPU slots only and this trial's slot is a GPU: build it against a "
                  "LibTorch with CUDA (scripts/build-torch-plugins), or train on CPU slots");
    }
#endif
    const StreamScope scope = on_stream();
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
#ifdef COHORT_TORCH_CUDA
    // The initial values are copied from the host's memory: done before the host reads them.
    if (stream_) stream_->synchronize();
#endif
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

  // Makes the trial's device and stream LibTorch's current ones on this thread while the result
  // lives (see above); on the CPU it does nothing. Open one at the top of each train_batch and
  // evaluate_batch. Also lets go of the metric values add_metric kept for the previous call.
  StreamScope on_stream() {
    kept_metrics_.clear();
#ifdef COHORT_TORCH_CUDA
    if (stream_) return StreamScope(*stream_);
#endif
    return StreamScope();
  }

  // Runs backward from the scalar `loss`: each parameter's gradient is added into the arena and
  // reported ready as autograd produces it. Checks the views first, and on a GPU that the trial's
  // stream is the current one (on_stream()).
  void backward(const torch::Tensor& loss) const {
    check_views();
#ifdef COHORT_TORCH_CUDA
    if (stream_ && c10::cuda::getCurrentCUDAStream(device_.index()) != *stream_) {
      throw Error(COHORT_STATUS_FAILED_PRECONDITION,
                  "the module computed off the trial's stream: open `const auto scope = "
                  "module.on_stream();` at the top of train_batch and evaluate_batch");
    }
#endif
    loss.backward();
  }

  // Adds the metric `name` of `record_count` records whose value is the one-element tensor
  // `value` (a mean for COHORT_REDUCE_MEAN). On the CPU it is read at once; on a GPU the host
  // reads it when a report needs it (metric_add_device, which needs a 1.3 host: a model class
  // that calls this declares host_minor_required = 3 or more).
  void add_metric(Metrics& metrics, std::string_view name, const torch::Tensor& value,
                  uint64_t record_count, cohort_reduction reduction = COHORT_REDUCE_MEAN) {
    if (value.numel() != 1) {
      throw Error(COHORT_STATUS_INVALID_ARGUMENT,
                  "metric '" + std::string(name) + "' is a tensor of " +
                      std::to_string(value.numel()) + " elements; a metric is one value");
    }
    if (!value.is_cuda()) {
      metrics.add(name, value.item<double>(), record_count, reduction);
      return;
    }
    // Kept until the next on_stream(): the host copies it on the stream after this call returns.
    // A float32 or float64 value goes as it is (no kernel to convert it, every batch).
    torch::Tensor kept = value.detach();
    if (kept.scalar_type() == torch::kFloat32) {
      metrics.add_on_device(name, kept.data_ptr<float>(), record_count, reduction);
    } else {
      if (kept.scalar_type() != torch::kFloat64) kept = kept.to(torch::kFloat64);
      metrics.add_on_device(name, kept.data_ptr<double>(), record_count, reduction);
    }
    kept_metrics_.push_back(std::move(kept));
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
  std::vector<torch::Tensor> kept_metrics_;  // add_metric's device values of the current call
#ifdef COHORT_TORCH_CUDA
  std::optional<c10::cuda::CUDAStream> stream_;  // the trial's, on a GPU slot
#endif
};

}  // namespace cohort

#endif  // COHORT_TORCH_HPP_
