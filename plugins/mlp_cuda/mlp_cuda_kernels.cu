#include <algorithm>
#include <cmath>

#include "mlp_cuda_kernels.h"

namespace mlp {
namespace {

constexpr unsigned kThreads = 256;

unsigned BlocksFor(size_t count) {
  return static_cast<unsigned>(
      std::max<size_t>(1, std::min<size_t>((count + kThreads - 1) / kThreads, 1 << 16)));
}

__device__ size_t FirstIndex() {
  return blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
}
__device__ size_t Stride() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

__global__ void BiasActivationKernel(float* out, const float* bias, size_t rows, size_t cols,
                                     bool relu) {
  const size_t count = rows * cols;
  for (size_t i = FirstIndex(); i < count; i += Stride()) {
    const float value = out[i] + bias[i % cols];
    out[i] = relu ? fmaxf(value, 0.0f) : value;
  }
}

// One block: the batch's losses and hits are staged through shared memory a tile at a time, and
// thread 0 adds them in record order (the host's order, so the sums are the host's bits).
constexpr unsigned kTotalsTile = 1024;

__global__ void BatchTotalsKernel(const double* losses, const int32_t* correct, size_t rows,
                                  double* totals) {
  __shared__ double tile_losses[kTotalsTile];
  __shared__ int32_t tile_correct[kTotalsTile];
  double loss_sum = 0;
  uint64_t hits = 0;
  for (size_t first = 0; first < rows; first += kTotalsTile) {
    const size_t count = rows - first < kTotalsTile ? rows - first : kTotalsTile;
    for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
      tile_losses[i] = losses[first + i];
      tile_correct[i] = correct[first + i];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (size_t i = 0; i < count; ++i) {
        loss_sum += tile_losses[i];
        hits += static_cast<uint64_t>(tile_correct[i]);
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double records = static_cast<double>(rows);
    totals[kLossSum] = loss_sum;
    totals[kHits] = static_cast<double>(hits);
    totals[kMeanLoss] = rows == 0 ? 0.0 : loss_sum / records;
    totals[kAccuracy] = rows == 0 ? 0.0 : static_cast<double>(hits) / records;
  }
}

// One thread per record: the classes are few.
__global__ void SoftmaxCrossEntropyKernel(const float* logits, const int32_t* labels, size_t rows,
                                          size_t classes, double scale, float* dlogits,
                                          double* losses, int32_t* correct) {
  for (size_t r = FirstIndex(); r < rows; r += Stride()) {
    const float* row = logits + r * classes;
    size_t predicted = 0;
    for (size_t j = 1; j < classes; ++j) {
      if (row[j] > row[predicted]) predicted = j;
    }
    const double max_logit = row[predicted];
    double sum = 0;
    for (size_t j = 0; j < classes; ++j) sum += exp(static_cast<double>(row[j]) - max_logit);
    const double log_sum = max_logit + log(sum);
    const int32_t label = labels[r];
    const bool valid = label >= 0 && static_cast<size_t>(label) < classes;
    for (size_t j = 0; j < classes; ++j) {
      const double p = exp(static_cast<double>(row[j]) - log_sum);
      const double target = valid && static_cast<size_t>(label) == j ? 1.0 : 0.0;
      dlogits[r * classes + j] = static_cast<float>((p - target) * scale);
    }
    losses[r] = valid ? log_sum - static_cast<double>(row[label]) : nan("");
    correct[r] = valid && predicted == static_cast<size_t>(label) ? 1 : 0;
  }
}

__global__ void ReluGateKernel(float* delta, const float* input, size_t count) {
  for (size_t i = FirstIndex(); i < count; i += Stride()) {
    if (input[i] <= 0.0f) delta[i] = 0.0f;
  }
}

// One pass over the batch's features, record-major; the thread at a record's first feature also
// copies its label.
__global__ void GatherRecordsKernel(const float* features, const int32_t* labels,
                                    const uint32_t* indices, size_t rows, size_t input_size,
                                    float* out_inputs, int32_t* out_labels) {
  const size_t count = rows * input_size;
  for (size_t i = FirstIndex(); i < count; i += Stride()) {
    const size_t row = i / input_size;
    const size_t feature = i - row * input_size;
    const size_t record = indices[row];
    out_inputs[i] = features[record * input_size + feature];
    if (feature == 0) out_labels[row] = labels[record];
  }
}

}  // namespace

cudaError_t EnqueueBiasActivation(float* out, const float* bias, size_t rows, size_t cols,
                                  bool relu, cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  BiasActivationKernel<<<BlocksFor(rows * cols), kThreads, 0, stream>>>(out, bias, rows, cols,
                                                                        relu);
  return cudaGetLastError();
}

cudaError_t EnqueueSoftmaxCrossEntropy(const float* logits, const int32_t* labels, size_t rows,
                                       size_t classes, double scale, float* dlogits, double* losses,
                                       int32_t* correct, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxCrossEntropyKernel<<<BlocksFor(rows), kThreads, 0, stream>>>(
      logits, labels, rows, classes, scale, dlogits, losses, correct);
  return cudaGetLastError();
}

cudaError_t EnqueueReluGate(float* delta, const float* input, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  ReluGateKernel<<<BlocksFor(count), kThreads, 0, stream>>>(delta, input, count);
  return cudaGetLastError();
}

cudaError_t EnqueueGatherRecords(const float* features, const int32_t* labels,
                                 const uint32_t* indices, size_t rows, size_t input_size,
                                 float* out_inputs, int32_t* out_labels, cudaStream_t stream) {
  if (rows * input_size == 0) return cudaSuccess;
  GatherRecordsKernel<<<BlocksFor(rows * input_size), kThreads, 0, stream>>>(
      features, labels, indices, rows, input_size, out_inputs, out_labels);
  return cudaGetLastError();
}

cudaError_t EnqueueBatchTotals(const double* losses, const int32_t* correct, size_t rows,
                               double* totals, cudaStream_t stream) {
  BatchTotalsKernel<<<1, kThreads, 0, stream>>>(losses, correct, rows, totals);
  return cudaGetLastError();
}

}  // namespace mlp
