// mlp_cuda_kernels.h -- the element-wise parts of the CUDA MLP (the matrix products are cuBLAS's):
// bias and ReLU after a layer's product, softmax cross-entropy on the logits and the batch's
// totals, the ReLU's gate on the way back, and the gather of a batch's records. Each enqueues on
// `stream` and returns the launch error.
#ifndef COHORT_PLUGINS_MLP_CUDA_MLP_CUDA_KERNELS_H_
#define COHORT_PLUGINS_MLP_CUDA_MLP_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mlp {

// out[r][j] += bias[j] over `rows` x `cols` (row-major), then max(0, .) when `relu`.
cudaError_t EnqueueBiasActivation(float* out, const float* bias, size_t rows, size_t cols,
                                  bool relu, cudaStream_t stream);

// Per record r of `rows` logits rows of `classes`: losses[r] = the cross-entropy against
// labels[r] (in double, as the CPU network computes it), correct[r] = 1 when the first largest
// logit is the label, and dlogits[r][j] = (softmax_j - onehot_j) * scale. A label outside
// [0, classes) gives a NaN loss.
cudaError_t EnqueueSoftmaxCrossEntropy(const float* logits, const int32_t* labels, size_t rows,
                                       size_t classes, double scale, float* dlogits, double* losses,
                                       int32_t* correct, cudaStream_t stream);

// What EnqueueBatchTotals writes, by index into `totals`.
inline constexpr size_t kLossSum = 0;   // the losses' sum, added in record order
inline constexpr size_t kHits = 1;      // records whose arg-max logit is the label
inline constexpr size_t kMeanLoss = 2;  // kLossSum / rows (0 for no rows)
inline constexpr size_t kAccuracy = 3;  // kHits / rows (0 for no rows)
inline constexpr size_t kTotals = 4;

// The batch's totals from EnqueueSoftmaxCrossEntropy's per-record `losses` and `correct` (`rows`
// of each) into totals[0..kTotals), in double, as the host's BatchStats computes them.
cudaError_t EnqueueBatchTotals(const double* losses, const int32_t* correct, size_t rows,
                               double* totals, cudaStream_t stream);

// delta[i] = 0 where input[i] <= 0 (the ReLU that produced `input` was off), for `count` values.
cudaError_t EnqueueReluGate(float* delta, const float* input, size_t count, cudaStream_t stream);

// For each of `rows` records r: out_inputs[r] = features[indices[r]] (`input_size` floats, rows
// row-major) and out_labels[r] = labels[indices[r]]. Every index must be inside the arrays.
cudaError_t EnqueueGatherRecords(const float* features, const int32_t* labels,
                                 const uint32_t* indices, size_t rows, size_t input_size,
                                 float* out_inputs, int32_t* out_labels, cudaStream_t stream);

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_CUDA_MLP_CUDA_KERNELS_H_
