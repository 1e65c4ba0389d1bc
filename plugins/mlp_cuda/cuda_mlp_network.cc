// cuda_mlp_network.cc -- CudaMlpNetwork (see cuda_mlp_network.h).
//
// cuBLAS is column-major and the layers are row-major, so every product is written for the
// transposes: a row-major R x C matrix is a column-major C x R one. For a layer with input X
// (batch x in), weight W (in x out) and output Y = X W (batch x out):
//   forward   Y^T = W^T X^T           gemm(N, N, out, batch, in)
//   weights   dW^T += D^T X           gemm(N, T, out, in, batch)   (D = dLoss/dY, batch x out)
//   bias      db += D^T 1             gemv(N, out, batch)
//   below     dX^T = W D^T            gemm(T, N, in, batch, out)
#include "cuda_mlp_network.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.h"
#include "mlp_cuda_kernels.h"

namespace mlp {
namespace {

int Int(size_t value) { return static_cast<int>(value); }

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

}  // namespace

template <class T>
T* DeviceArray<T>::Reserve(size_t count) {
  if (count <= capacity_) return data_;
  cudaFree(data_);
  data_ = nullptr;
  capacity_ = 0;
  void* memory = nullptr;
  Check(cudaMalloc(&memory, count * sizeof(T)), "cudaMalloc for the MLP's scratch");
  data_ = static_cast<T*>(memory);
  capacity_ = count;
  return data_;
}

template class DeviceArray<float>;
template class DeviceArray<double>;
template class DeviceArray<int32_t>;
template class DeviceArray<uint32_t>;

CudaMlpNetwork::CudaMlpNetwork(std::vector<size_t> widths, cudaStream_t stream)
    : widths_(std::move(widths)), stream_(stream) {
  MlpNetwork check(widths_);  // the same validation of the widths
  activations_ = std::vector<DeviceArray<float>>(layer_count());
  Check(cublasCreate(&blas_), "cublasCreate");
  Check(cublasSetStream(blas_, stream_), "cublasSetStream");
}

CudaMlpNetwork::~CudaMlpNetwork() {
  cudaStreamSynchronize(stream_);
  cublasDestroy(blas_);
}

void CudaMlpNetwork::Initialize(uint64_t seed, std::span<const LayerBuffers<float>> params) {
  MlpNetwork host_network(widths_);
  std::vector<std::vector<float>> weights(layer_count()), biases(layer_count());
  std::vector<LayerBuffers<float>> host(layer_count());
  for (size_t l = 0; l < layer_count(); ++l) {
    weights[l].resize(weight_count(l));
    biases[l].resize(fan_out(l));
    host[l] = {weights[l].data(), biases[l].data()};
  }
  host_network.Initialize(seed, host);
  for (size_t l = 0; l < layer_count(); ++l) {
    Check(cudaMemcpyAsync(params[l].weight, weights[l].data(), weight_count(l) * sizeof(float),
                          cudaMemcpyHostToDevice, stream_),
          "copying the initial weights");
    Check(cudaMemcpyAsync(params[l].bias, biases[l].data(), fan_out(l) * sizeof(float),
                          cudaMemcpyHostToDevice, stream_),
          "copying the initial biases");
  }
  Check(cudaStreamSynchronize(stream_), "initializing the parameters");
}

const float* CudaMlpNetwork::LayerInput(size_t layer) const {
  return layer == 0 ? batch_inputs_ : activations_[layer - 1].data();
}

CudaMlpNetwork::DeviceBatch CudaMlpNetwork::CopyIn(const float* inputs, const int32_t* labels,
                                                   size_t batch) {
  Check(cudaMemcpyAsync(inputs_.Reserve(batch * widths_.front()), inputs,
                        batch * widths_.front() * sizeof(float), cudaMemcpyHostToDevice, stream_),
        "copying the batch's inputs");
  Check(cudaMemcpyAsync(labels_.Reserve(batch), labels, batch * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream_),
        "copying the batch's labels");
  return {inputs_.data(), labels_.data(), batch};
}

void CudaMlpNetwork::Forward(std::span<const LayerParams> params, const DeviceBatch& input) {
  const size_t batch = input.size;
  batch_inputs_ = input.inputs;
  for (size_t l = 0; l < layer_count(); ++l) {
    float* out = activations_[l].Reserve(batch * fan_out(l));
    Check(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, Int(fan_out(l)), Int(batch), Int(fan_in(l)),
                      &kOne, params[l].weight, Int(fan_out(l)), LayerInput(l), Int(fan_in(l)),
                      &kZero, out, Int(fan_out(l))),
          "cublasSgemm (forward)");
    Check(EnqueueBiasActivation(out, params[l].bias, batch, fan_out(l), l + 1 < layer_count(),
                                stream_),
          "the bias and ReLU kernel");
  }
  const size_t classes = widths_.back();
  Check(
      EnqueueSoftmaxCrossEntropy(activations_.back().data(), input.labels, batch, classes,
                                 1.0 / static_cast<double>(batch), deltas_.Reserve(batch * classes),
                                 losses_.Reserve(batch), correct_.Reserve(batch), stream_),
      "the softmax cross-entropy kernel");
}

void CudaMlpNetwork::EnqueueTotals(size_t batch) {
  Check(
      EnqueueBatchTotals(losses_.data(), correct_.data(), batch, totals_.Reserve(kTotals), stream_),
      "the batch totals kernel");
  last_batch_ = batch;
}

BatchStats CudaMlpNetwork::Totals() {
  double totals[kTotals] = {};
  if (totals_.data() != nullptr) {
    Check(cudaMemcpyAsync(totals, totals_.data(), sizeof totals, cudaMemcpyDeviceToHost, stream_),
          "copying the batch totals");
  }
  Check(cudaStreamSynchronize(stream_), "the batch");
  BatchStats stats;
  stats.records = last_batch_;
  stats.loss_sum = totals[kLossSum];
  stats.correct = static_cast<size_t>(totals[kHits]);
  return stats;
}

void CudaMlpNetwork::Evaluate(std::span<const LayerParams> params, const DeviceBatch& batch) {
  Forward(params, batch);
  EnqueueTotals(batch.size);
}

void CudaMlpNetwork::Train(std::span<const LayerParams> params, std::span<const LayerGrads> grads,
                           const DeviceBatch& input,
                           const std::function<void(size_t layer)>& on_layer_ready) {
  const size_t batch = input.size;
  Forward(params, input);
  if (ones_filled_ < batch) {
    const std::vector<float> ones(batch, 1.0f);
    Check(cudaMemcpyAsync(ones_.Reserve(batch), ones.data(), batch * sizeof(float),
                          cudaMemcpyHostToDevice, stream_),
          "copying the ones");
    Check(cudaStreamSynchronize(stream_), "copying the ones");  // `ones` leaves scope
    ones_filled_ = batch;
  }
  for (size_t l = layer_count(); l-- > 0;) {
    const int in = Int(fan_in(l)), out = Int(fan_out(l)), rows = Int(batch);
    Check(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, out, in, rows, &kOne, deltas_.data(), out,
                      LayerInput(l), in, &kOne, grads[l].weight, out),
          "cublasSgemm (weight gradient)");
    Check(cublasSgemv(blas_, CUBLAS_OP_N, out, rows, &kOne, deltas_.data(), out, ones_.data(), 1,
                      &kOne, grads[l].bias, 1),
          "cublasSgemv (bias gradient)");
    if (on_layer_ready) on_layer_ready(l);
    if (l == 0) break;
    float* below = next_deltas_.Reserve(batch * fan_in(l));
    Check(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, in, rows, out, &kOne, params[l].weight, out,
                      deltas_.data(), out, &kZero, below, in),
          "cublasSgemm (input gradient)");
    Check(EnqueueReluGate(below, LayerInput(l), batch * fan_in(l), stream_),
          "the ReLU gate kernel");
    swap(deltas_, next_deltas_);
  }
  EnqueueTotals(batch);
}

}  // namespace mlp
