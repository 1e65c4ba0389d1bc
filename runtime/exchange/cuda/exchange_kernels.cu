#include "runtime/exchange/cuda/exchange_kernels.h"

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

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

// Top-k's radix select. Keys are 31 bits (MagnitudeKey has no sign bit); the threshold, the k-th
// largest key, is found one digit at a time from the top: 11 bits, then 10, then 10. scalars[0]
// holds the threshold's digits chosen so far, scalars[1] how many of the entries whose keys share
// them are still to be chosen; at the end, the threshold and how many keys equal to it are sent.
constexpr unsigned kTopKBins = 2048;  // the widest digit
constexpr unsigned kTopDigitShift = 20;  // the first digit, counted by TopKSumKernel
constexpr unsigned kTopDigitBits = 11;
constexpr unsigned kTopKDigitShift[3] = {kTopDigitShift, 10, 0};  // host side
constexpr unsigned kTopKDigitBits[3] = {kTopDigitBits, 10, 10};
constexpr unsigned kChooseThreads = kTopKBins / 2;
constexpr uint64_t kHistogramBlocks = 1024;  // each flushes a histogram: fewer, fuller blocks
constexpr unsigned kTileThreads = 256;
constexpr unsigned kTileItems = 16;
constexpr uint64_t kTileSize = kTileThreads * kTileItems;
constexpr uint64_t kAboveOne = uint64_t{1} << 32;  // tile counts: above << 32 | equal

unsigned HistogramBlocksFor(uint64_t count) {
  return static_cast<unsigned>(std::min<uint64_t>(BlocksFor(count), kHistogramBlocks));
}

uint64_t TilesFor(uint64_t count) { return (count + kTileSize - 1) / kTileSize; }

// Zeroes the histogram; the threshold has no digits yet and k entries are to be chosen.
__global__ void TopKStartKernel(uint64_t k, uint32_t* histogram, uint32_t* scalars) {
  for (unsigned b = threadIdx.x; b < kTopKBins; b += blockDim.x) histogram[b] = 0;
  if (threadIdx.x == 0) {
    scalars[0] = 0;
    scalars[1] = static_cast<uint32_t>(k);
  }
}

__device__ void ClearBins(uint32_t* bins) {
  for (unsigned b = threadIdx.x; b < kTopKBins; b += blockDim.x) bins[b] = 0;
  __syncthreads();
}

__device__ void FlushBins(const uint32_t* bins, unsigned count, uint32_t* histogram) {
  __syncthreads();
  for (unsigned b = threadIdx.x; b < count; b += blockDim.x) {
    if (bins[b] != 0) atomicAdd(&histogram[b], bins[b]);
  }
}

// residual[i] += grad[i] * scale, keys[i] = its magnitude key, and the histogram of the keys' top
// digit.
__global__ void TopKSumKernel(const float* grad, uint64_t count, float scale, float* residual,
                              uint32_t* keys, uint32_t* histogram) {
  __shared__ uint32_t bins[kTopKBins];
  ClearBins(bins);
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    const float scaled = scale == 1.0f ? grad[i] : __fmul_rn(grad[i], scale);
    const float sum = __fadd_rn(residual[i], scaled);
    residual[i] = sum;
    const uint32_t key = MagnitudeKey(sum);
    keys[i] = key;
    atomicAdd(&bins[key >> kTopDigitShift], 1u);
  }
  FlushBins(bins, 1u << kTopDigitBits, histogram);
}

// The histogram of digit (key >> shift) over the keys whose higher digits are the threshold's.
__global__ void TopKHistogramKernel(const uint32_t* keys, uint64_t count, const uint32_t* scalars,
                                    unsigned shift, unsigned bits, uint32_t* histogram) {
  __shared__ uint32_t bins[kTopKBins];
  ClearBins(bins);
  const uint32_t higher = scalars[0] >> (shift + bits);
  const uint32_t mask = (1u << bits) - 1;
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) {
    const uint32_t key = keys[i];
    if ((key >> (shift + bits)) == higher) atomicAdd(&bins[(key >> shift) & mask], 1u);
  }
  FlushBins(bins, 1u << bits, histogram);
}

// One block of kChooseThreads: from the digit's histogram, the digit of the scalars[1]-th largest
// counted key joins the threshold, and scalars[1] drops by the count of larger digits. Leaves the
// histogram zeroed for the next pass.
__global__ void TopKChooseDigitKernel(uint32_t* histogram, unsigned shift, unsigned bits,
                                      uint32_t* scalars) {
  using Scan = cub::BlockScan<uint32_t, kChooseThreads>;
  __shared__ typename Scan::TempStorage storage;
  const int bins = 1 << bits;
  const int upper_bin = bins - 1 - 2 * static_cast<int>(threadIdx.x);  // largest digits first
  const int lower_bin = upper_bin - 1;
  const uint32_t upper = upper_bin >= 0 ? histogram[upper_bin] : 0;
  const uint32_t lower = lower_bin >= 0 ? histogram[lower_bin] : 0;
  if (upper_bin >= 0) histogram[upper_bin] = 0;
  if (lower_bin >= 0) histogram[lower_bin] = 0;
  const uint32_t wanted = scalars[1];
  uint32_t larger = 0;  // counted keys with digits above this thread's
  Scan(storage).ExclusiveSum(upper + lower, larger);
  // Exactly one bin holds the wanted key; its thread writes (after every thread read scalars).
  if (upper_bin >= 0 && larger < wanted && larger + upper >= wanted) {
    scalars[0] |= static_cast<uint32_t>(upper_bin) << shift;
    scalars[1] = wanted - larger;
  } else if (lower_bin >= 0 && larger + upper < wanted && larger + upper + lower >= wanted) {
    scalars[0] |= static_cast<uint32_t>(lower_bin) << shift;
    scalars[1] = wanted - larger - upper;
  }
}

// Per tile of kTileSize keys: how many are above the threshold and how many equal it.
__global__ void TopKTileCountKernel(const uint32_t* keys, uint64_t count, const uint32_t* scalars,
                                    uint64_t* tile_counts) {
  using Reduce = cub::BlockReduce<uint64_t, kTileThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const uint32_t threshold = scalars[0];
  const uint64_t start = uint64_t{blockIdx.x} * kTileSize;
  uint64_t mine = 0;
  for (unsigned j = 0; j < kTileItems; ++j) {
    const uint64_t i = start + j * kTileThreads + threadIdx.x;
    if (i >= count) break;
    const uint32_t key = keys[i];
    mine += key > threshold ? kAboveOne : (key == threshold ? 1 : 0);
  }
  const uint64_t total = Reduce(storage).Sum(mine);
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = total;
}

// Each tile's selected entries into indices, in index order: a key above the threshold, or equal
// to it and among the first scalars[1] such keys. An entry's place is the number of selected
// entries before it: the keys above the threshold before it, plus the equal keys before it up to
// scalars[1].
__global__ void TopKTileWriteKernel(const uint32_t* keys, uint64_t count, const uint32_t* scalars,
                                    const uint64_t* tile_offsets, uint32_t* indices) {
  using Load = cub::BlockLoad<uint32_t, kTileThreads, kTileItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<uint64_t, kTileThreads>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
  } storage;
  const uint32_t threshold = scalars[0];
  const uint64_t equal_to_send = scalars[1];
  const uint64_t start = uint64_t{blockIdx.x} * kTileSize;
  const int valid = static_cast<int>(count - start < kTileSize ? count - start : kTileSize);
  uint32_t items[kTileItems];  // blocked: entries first + j
  Load(storage.load).Load(keys + start, items, valid, 0u);
  __syncthreads();  // the storage is reused by the scan
  const uint64_t first = start + threadIdx.x * kTileItems;
  uint64_t mine = 0;
  for (unsigned j = 0; j < kTileItems; ++j) {
    if (first + j >= count) break;
    mine += items[j] > threshold ? kAboveOne : (items[j] == threshold ? 1 : 0);
  }
  uint64_t before = 0;
  Scan(storage.scan).ExclusiveSum(mine, before);
  before += tile_offsets[blockIdx.x];
  uint64_t above = before >> 32;
  uint64_t equal = before & (kAboveOne - 1);
  for (unsigned j = 0; j < kTileItems; ++j) {
    if (first + j >= count) break;
    if (items[j] > threshold) {
      indices[above + (equal < equal_to_send ? equal : equal_to_send)] =
          static_cast<uint32_t>(first + j);
      ++above;
    } else if (items[j] == threshold) {
      if (equal < equal_to_send) indices[above + equal] = static_cast<uint32_t>(first + j);
      ++equal;
    }
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

namespace {

constexpr size_t kScratchAlignment = 256;

size_t Aligned(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

cudaError_t ScanTempBytes(uint64_t capacity, size_t* bytes) {
  *bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, *bytes,
                                                static_cast<const uint64_t*>(nullptr),
                                                static_cast<uint64_t*>(nullptr),
                                                static_cast<int>(TilesFor(capacity)));
  *bytes = std::max<size_t>(*bytes, 1);
  return e;
}

}  // namespace

cudaError_t TopKScratchBytes(uint64_t capacity, size_t* bytes) {
  size_t temp = 0;
  if (cudaError_t e = ScanTempBytes(capacity, &temp); e != cudaSuccess) return e;
  const uint64_t tiles = std::max<uint64_t>(TilesFor(capacity), 1);
  *bytes = Aligned(capacity * sizeof(uint32_t)) + Aligned(kTopKBins * sizeof(uint32_t)) +
           Aligned(2 * sizeof(uint32_t)) + 2 * Aligned(tiles * sizeof(uint64_t)) + Aligned(temp);
  return cudaSuccess;
}

cudaError_t TopKScratchAt(void* memory, uint64_t capacity, TopKScratch* scratch) {
  size_t temp = 0;
  if (cudaError_t e = ScanTempBytes(capacity, &temp); e != cudaSuccess) return e;
  const uint64_t tiles = std::max<uint64_t>(TilesFor(capacity), 1);
  auto* next = static_cast<uint8_t*>(memory);
  const auto take = [&next](size_t bytes) {
    uint8_t* part = next;
    next += Aligned(bytes);
    return part;
  };
  scratch->keys = reinterpret_cast<uint32_t*>(take(capacity * sizeof(uint32_t)));
  scratch->histogram = reinterpret_cast<uint32_t*>(take(kTopKBins * sizeof(uint32_t)));
  scratch->scalars = reinterpret_cast<uint32_t*>(take(2 * sizeof(uint32_t)));
  scratch->tile_counts = reinterpret_cast<uint64_t*>(take(tiles * sizeof(uint64_t)));
  scratch->tile_offsets = reinterpret_cast<uint64_t*>(take(tiles * sizeof(uint64_t)));
  scratch->temp = take(temp);
  scratch->temp_bytes = temp;
  return cudaSuccess;
}

cudaError_t EnqueueTopKCompress(const float* grad, uint64_t count, float scale, float* residual,
                                uint64_t k, const TopKScratch& scratch, uint32_t* indices,
                                float* values, cudaStream_t stream) {
  if (k == 0 || count == 0) return cudaSuccess;
  TopKStartKernel<<<1, kChooseThreads, 0, stream>>>(k, scratch.histogram, scratch.scalars);
  const unsigned blocks = HistogramBlocksFor(count);
  TopKSumKernel<<<blocks, kThreads, 0, stream>>>(grad, count, scale, residual, scratch.keys,
                                                 scratch.histogram);
  for (int digit = 0; digit < 3; ++digit) {
    if (digit > 0) {
      TopKHistogramKernel<<<blocks, kThreads, 0, stream>>>(
          scratch.keys, count, scratch.scalars, kTopKDigitShift[digit], kTopKDigitBits[digit],
          scratch.histogram);
    }
    TopKChooseDigitKernel<<<1, kChooseThreads, 0, stream>>>(
        scratch.histogram, kTopKDigitShift[digit], kTopKDigitBits[digit], scratch.scalars);
  }
  const uint64_t tiles = TilesFor(count);
  TopKTileCountKernel<<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(
      scratch.keys, count, scratch.scalars, scratch.tile_counts);
  size_t temp_bytes = scratch.temp_bytes;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(scratch.temp, temp_bytes, scratch.tile_counts,
                                                scratch.tile_offsets, static_cast<int>(tiles),
                                                stream);
  if (e != cudaSuccess) return e;
  TopKTileWriteKernel<<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(
      scratch.keys, count, scratch.scalars, scratch.tile_offsets, indices);
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
