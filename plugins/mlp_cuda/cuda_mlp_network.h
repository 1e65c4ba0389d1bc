// cuda_mlp_network.h -- MlpNetwork's classifier (mlp_network.h) on a CUDA device: the same
// layers, layout, initialization and loss, with the matrix products through cuBLAS and the rest
// in small kernels, all enqueued on the stream Cohort gives the plugin. Parameters and gradients
// are device pointers into the runtime's arena; a batch's inputs and labels are on the device
// already (DeviceBatch, see device_dataset.h) or come from the host and are copied there. cuBLAS
// sums in its own order, so values differ from the CPU network's in the last bits; each run on the
// same device is repeatable.
//
// Errors from CUDA or cuBLAS throw std::runtime_error naming the call. One thread at a time.
#ifndef COHORT_PLUGINS_MLP_CUDA_CUDA_MLP_NETWORK_H_
#define COHORT_PLUGINS_MLP_CUDA_CUDA_MLP_NETWORK_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "mlp_network.h"

namespace mlp {

// A device array that grows as needed; its contents are not kept when it grows.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data_); }
  // At least `count` elements.
  T* Reserve(size_t count);
  T* data() const { return data_; }
  friend void swap(DeviceArray& a, DeviceArray& b) {
    std::swap(a.data_, b.data_);
    std::swap(a.capacity_, b.capacity_);
  }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

class CudaMlpNetwork {
 public:
  // `widths` as MlpNetwork's; `stream` (a cudaStream_t on the current device) outlives this.
  CudaMlpNetwork(std::vector<size_t> widths, cudaStream_t stream);
  ~CudaMlpNetwork();
  CudaMlpNetwork(const CudaMlpNetwork&) = delete;
  CudaMlpNetwork& operator=(const CudaMlpNetwork&) = delete;

  size_t layer_count() const { return widths_.size() - 1; }
  size_t fan_in(size_t layer) const { return widths_[layer]; }
  size_t fan_out(size_t layer) const { return widths_[layer + 1]; }
  size_t weight_count(size_t layer) const { return fan_in(layer) * fan_out(layer); }

  // MlpNetwork::Initialize's values (computed on the host), copied into the device `params`.
  void Initialize(uint64_t seed, std::span<const LayerBuffers<float>> params);

  // A batch on the device: `size` records, inputs (size x fan_in(0), row-major) and labels, left
  // unchanged by others until the work enqueued on it is done.
  struct DeviceBatch {
    const float* inputs = nullptr;
    const int32_t* labels = nullptr;
    size_t size = 0;
  };

  // As MlpNetwork::Evaluate and Train, with device params and grads, on a batch on the device,
  // enqueued without waiting for the device. on_layer_ready(l) is called once layer l's gradient
  // work is enqueued (final on the stream). The batch's totals are left on the device
  // (device_totals); Totals() waits for them.
  void Evaluate(std::span<const LayerParams> params, const DeviceBatch& batch);
  void Train(std::span<const LayerParams> params, std::span<const LayerGrads> grads,
             const DeviceBatch& batch, const std::function<void(size_t layer)>& on_layer_ready);

  // The last pass's totals in device memory, indexed as mlp_cuda_kernels.h's kLossSum ...
  // kAccuracy (doubles), written by the work enqueued on the stream; overwritten by the next pass.
  const double* device_totals() const { return totals_.data(); }
  // Waits for the stream and returns the last pass's totals.
  BatchStats Totals();

  // Enqueues the copy of `batch` host inputs (batch x fan_in(0)) and labels to the device and
  // returns the batch there; it holds them until the next CopyIn.
  DeviceBatch CopyIn(const float* inputs, const int32_t* labels, size_t batch);

 private:
  // Runs every layer and the loss; leaves d(mean loss)/d(logits) in deltas_.
  void Forward(std::span<const LayerParams> params, const DeviceBatch& batch);
  // Enqueues the batch's totals into totals_.
  void EnqueueTotals(size_t batch);
  // Layer `layer`'s input: the batch's inputs for the first layer.
  const float* LayerInput(size_t layer) const;

  std::vector<size_t> widths_;
  cudaStream_t stream_;
  cublasHandle_t blas_ = nullptr;
  DeviceArray<float> inputs_;  // a host batch, copied in
  DeviceArray<int32_t> labels_;
  const float* batch_inputs_ = nullptr;          // the batch of the pass under way
  std::vector<DeviceArray<float>> activations_;  // [l]: output of layer l, batch x fan_out(l)
  DeviceArray<float> deltas_, next_deltas_;
  DeviceArray<float> ones_;  // batch ones: the bias gradient is deltas^T * ones
  DeviceArray<double> losses_;
  DeviceArray<int32_t> correct_;
  DeviceArray<double> totals_;  // kTotals values of the last pass
  size_t last_batch_ = 0;
  size_t ones_filled_ = 0;
};

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_CUDA_CUDA_MLP_NETWORK_H_
