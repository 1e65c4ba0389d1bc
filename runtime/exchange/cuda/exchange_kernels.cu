#include "runtime/exchange/cuda/exchange_kernels.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "runtime/exchange/float_bits.h"

namespace cohort {
namespace {

constexpr unsigned kThreads = 256;
constexpr uint64_t kMaxBlocks = 1 << 16;

// Blocks for a grid-stride loop over `count` elements.
unsigned BlocksFor(uint64_t count) {
  return static_cast<unsigned>(
      std::max<uint64_t>(1, std::min(kMaxBlocks, (count + kThreads - 1) / kThreads)));
}

// Grid-stride loop bounds.
__device__ uint64_t FirstIndex() { return uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ uint64_t Stride() { return uint64_t{gridDim.x} * blockDim.x; }

__global__ void ScaleKernel(float* data, uint64_t count, float scale) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) data[i] = __fmul_rn(data[i], scale);
}

template <WireFormat kFormat>
__global__ void EncodeKernel(const float* in, uint64_t count, float scale, uint16_t* out) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    const float value = scale == 1.0f ? in[i] : __fmul_rn(in[i], scale);
    out[i] = kFormat == WireFormat::kFloat16 ? FloatToHalf(value) : FloatToBfloat16(value);
  }
}

template <WireFormat kFormat>
__global__ void DecodeKernel(const uint16_t* in, uint64_t count, float* out) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    out[i] = kFormat == WireFormat::kFloat16 ? HalfToFloat(in[i]) : Bfloat16ToFloat(in[i]);
  }
}

__global__ void AddKernel(float* inout, const float* addend, uint64_t count) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride())
    inout[i] = __fadd_rn(inout[i], addend[i]);
}

// Sum over the block of each thread's `value`; every thread gets the total.
__device__ double BlockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

__device__ double BlockDot(const float* a, const float* b, uint64_t length, double* shared) {
  double partial = 0.0;
  for (uint64_t k = threadIdx.x; k < length; k += blockDim.x) {
    partial += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  }
  return BlockSum(partial, shared);
}

// Removes columns [0, j)'s components from column j; returns its norm afterwards.
__device__ double Project(float* columns, uint64_t length, uint32_t j, double* shared) {
  float* column = columns + j * length;
  for (uint32_t i = 0; i < j; ++i) {
    const float* earlier = columns + i * length;
    const double projection = BlockDot(earlier, column, length, shared);
    for (uint64_t k = threadIdx.x; k < length; k += blockDim.x) {
      column[k] = static_cast<float>(static_cast<double>(column[k]) -
                                     projection * static_cast<double>(earlier[k]));
    }
    __syncthreads();
  }
  return sqrt(BlockDot(column, column, length, shared));
}

// One block walks the columns in order (each depends on the ones before).
__global__ void OrthonormalizeKernel(float* columns, uint64_t length, uint32_t rank,
                                     const float* redraw) {
  __shared__ double shared[kThreads];
  for (uint32_t j = 0; j < rank; ++j) {
    float* column = columns + j * length;
    double norm = Project(columns, length, j, shared);
    if (norm == 0.0 && redraw != nullptr) {
      for (uint64_t k = threadIdx.x; k < length; k += blockDim.x)
        column[k] = redraw[j * length + k];
      __syncthreads();
      norm = Project(columns, length, j, shared);
    }
    if (norm != 0.0) {
      for (uint64_t k = threadIdx.x; k < length; k += blockDim.x) {
        column[k] = static_cast<float>(static_cast<double>(column[k]) / norm);
      }
    }
    __syncthreads();
  }
}

// residual[i] += grad[i] * scale, keys[i] = its magnitude key.
__global__ void TopKSumKernel(const float* grad, uint64_t count, float scale, float* residual,
                              uint32_t* keys) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    const float scaled = scale == 1.0f ? grad[i] : __fmul_rn(grad[i], scale);
    const float sum = __fadd_rn(residual[i], scaled);
    residual[i] = sum;
    keys[i] = MagnitudeKey(sum);
  }
}

// From the keys sorted largest first: the k-th largest key (the threshold) and how many entries
// equal to it are sent (those among the first k of the sorted keys).
__global__ void TopKThresholdKernel(const uint32_t* sorted, uint64_t k, uint32_t* scalars) {
  const uint32_t threshold = sorted[k - 1];
  uint64_t low = 0;  // first index in [0, k) whose key equals the threshold
  uint64_t high = k - 1;
  while (low < high) {
    const uint64_t middle = (low + high) / 2;
    if (sorted[middle] > threshold) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  scalars[0] = threshold;
  scalars[1] = static_cast<uint32_t>(k - low);
}

__global__ void TopKTieKernel(const uint32_t* keys, uint64_t count, const uint32_t* scalars,
                              uint32_t* ties) {
  const uint32_t threshold = scalars[0];
  for (uint64_t i = FirstIndex(); i < count; i += Stride())
    ties[i] = keys[i] == threshold ? 1u : 0u;
}

// flags[i]: entry i is sent; indices[i] = i for the selection.
__global__ void TopKFlagKernel(const uint32_t* keys, const uint32_t* tie_rank, uint64_t count,
                               const uint32_t* scalars, uint8_t* flags, uint32_t* indices) {
  const uint32_t threshold = scalars[0];
  const uint32_t ties_to_send = scalars[1];
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    const bool sent = keys[i] > threshold || (keys[i] == threshold && tie_rank[i] < ties_to_send);
    flags[i] = sent ? 1 : 0;
    indices[i] = static_cast<uint32_t>(i);
  }
}

// values[j] = residual[indices[j]], which then becomes 0.
__global__ void TopKGatherKernel(const uint32_t* indices, uint64_t k, float* residual,
                                 float* values) {
  for (uint64_t j = FirstIndex(); j < k; j += Stride()) {
    values[j] = residual[indices[j]];
    residual[indices[j]] = 0.0f;
  }
}

__global__ void ScatterAddKernel(const uint32_t* indices, const float* values, uint64_t k,
                                 float* out) {
  for (uint64_t j = FirstIndex(); j < k; j += Stride())
    out[indices[j]] = __fadd_rn(out[indices[j]], values[j]);
}

}  // namespace

cudaError_t EnqueueScale(float* data, uint64_t count, float scale, cudaStream_t stream) {
  if (scale == 1.0f || count == 0) return cudaSuccess;
  ScaleKernel<<<BlocksFor(count), kThreads, 0, stream>>>(data, count, scale);
  return cudaGetLastError();
}

cudaError_t EnqueueEncode(WireFormat format, const float* in, uint64_t count, float scale,
                          uint16_t* out, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (format == WireFormat::kFloat16) {
    EncodeKernel<WireFormat::kFloat16>
        <<<BlocksFor(count), kThreads, 0, stream>>>(in, count, scale, out);
  } else {
    EncodeKernel<WireFormat::kBfloat16>
        <<<BlocksFor(count), kThreads, 0, stream>>>(in, count, scale, out);
  }
  return cudaGetLastError();
}

cudaError_t EnqueueDecode(WireFormat format, const uint16_t* in, uint64_t count, float* out,
                          cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (format == WireFormat::kFloat16) {
    DecodeKernel<WireFormat::kFloat16><<<BlocksFor(count), kThreads, 0, stream>>>(in, count, out);
  } else {
    DecodeKernel<WireFormat::kBfloat16><<<BlocksFor(count), kThreads, 0, stream>>>(in, count, out);
  }
  return cudaGetLastError();
}

cudaError_t EnqueueAdd(float* inout, const float* addend, uint64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  AddKernel<<<BlocksFor(count), kThreads, 0, stream>>>(inout, addend, count);
  return cudaGetLastError();
}

cudaError_t EnqueueOrthonormalize(float* columns, uint64_t length, uint32_t rank,
                                  const float* redraw, cudaStream_t stream) {
  if (rank == 0 || length == 0) return cudaSuccess;
  OrthonormalizeKernel<<<1, kThreads, 0, stream>>>(columns, length, rank, redraw);
  return cudaGetLastError();
}

cudaError_t TopKTempBytes(uint64_t capacity, size_t* bytes) {
  const int n = static_cast<int>(capacity);
  size_t sort = 0;
  size_t scan = 0;
  size_t select = 0;
  cudaError_t e = cub::DeviceRadixSort::SortKeysDescending(
      nullptr, sort, static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), n);
  if (e != cudaSuccess) return e;
  e = cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const uint32_t*>(nullptr),
                                    static_cast<uint32_t*>(nullptr), n);
  if (e != cudaSuccess) return e;
  e = cub::DeviceSelect::Flagged(
      nullptr, select, static_cast<const uint32_t*>(nullptr), static_cast<const uint8_t*>(nullptr),
      static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), n);
  if (e != cudaSuccess) return e;
  *bytes = std::max({sort, scan, select, size_t{1}});
  return cudaSuccess;
}

cudaError_t EnqueueTopKCompress(const float* grad, uint64_t count, float scale, float* residual,
                                uint64_t k, const TopKScratch& scratch, uint32_t* indices,
                                float* values, cudaStream_t stream) {
  if (k == 0 || count == 0) return cudaSuccess;
  const int n = static_cast<int>(count);
  const unsigned blocks = BlocksFor(count);
  TopKSumKernel<<<blocks, kThreads, 0, stream>>>(grad, count, scale, residual, scratch.keys);
  size_t temp_bytes = scratch.temp_bytes;
  cudaError_t e =
      cub::DeviceRadixSort::SortKeysDescending(scratch.temp, temp_bytes, scratch.keys, scratch.work,
                                               n, 0, 31, stream);  // keys have no sign bit
  if (e != cudaSuccess) return e;
  TopKThresholdKernel<<<1, 1, 0, stream>>>(scratch.work, k, scratch.scalars);
  TopKTieKernel<<<blocks, kThreads, 0, stream>>>(scratch.keys, count, scratch.scalars,
                                                 scratch.work);
  temp_bytes = scratch.temp_bytes;
  e = cub::DeviceScan::ExclusiveSum(scratch.temp, temp_bytes, scratch.work, scratch.tie_rank, n,
                                    stream);
  if (e != cudaSuccess) return e;
  TopKFlagKernel<<<blocks, kThreads, 0, stream>>>(scratch.keys, scratch.tie_rank, count,
                                                  scratch.scalars, scratch.flags, scratch.work);
  temp_bytes = scratch.temp_bytes;
  e = cub::DeviceSelect::Flagged(scratch.temp, temp_bytes, scratch.work, scratch.flags, indices,
                                 scratch.scalars + 2, n, stream);
  if (e != cudaSuccess) return e;
  TopKGatherKernel<<<BlocksFor(k), kThreads, 0, stream>>>(indices, k, residual, values);
  return cudaGetLastError();
}

cudaError_t EnqueueScatterAdd(const uint32_t* indices, const float* values, uint64_t k, float* out,
                              cudaStream_t stream) {
  if (k == 0) return cudaSuccess;
  ScatterAddKernel<<<BlocksFor(k), kThreads, 0, stream>>>(indices, values, k, out);
  return cudaGetLastError();
}

}  // namespace cohort
