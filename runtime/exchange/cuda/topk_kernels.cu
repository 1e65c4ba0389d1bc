// Top-k on the device: a radix select of the k largest magnitudes, placed in index order by
// tiles, and the scatter-add that decodes the gathered pairs (topk_kernels.h).
#include <algorithm>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "runtime/exchange/compression/float_bits.h"
#include "runtime/exchange/cuda/device_arith.cuh"
#include "runtime/exchange/cuda/launch_shape.cuh"
#include "runtime/exchange/cuda/topk_kernels.h"

namespace cohort {
namespace {

// Top-k's radix select. Keys are 31 bits (MagnitudeKey has no sign bit); the threshold, the k-th
// largest key, is found one digit at a time from the top: 11 bits, then 10, then 10. scalars[0]
// holds the threshold's digits chosen so far, scalars[1] how many of the entries whose keys share
// them are still to be chosen; at the end, the threshold and how many keys equal to it are sent.
constexpr unsigned kTopKBins = 2048;     // the widest digit
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

template <auto kKernel>
unsigned HistogramBlocksFor(uint64_t items) {
  return static_cast<unsigned>(
      std::min<uint64_t>(ResidentBlocks<kKernel>(items), kHistogramBlocks));
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
// digit; vectors of 4.
__device__ void TopKSumOne(float grad, float scale, float* residual, uint32_t* key,
                           uint32_t* bins) {
  *residual = __fadd_rn(*residual, Scaled(grad, scale));
  *key = MagnitudeKey(*residual);
  atomicAdd(&bins[*key >> kTopDigitShift], 1u);
}

__global__ void TopKSumKernel(const float* grad, float scale, float* residual, uint32_t* keys,
                              VectorSplit split, uint32_t* histogram) {
  __shared__ uint32_t bins[kTopKBins];
  ClearBins(bins);
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    const uint64_t e = split.ScalarElement(i);
    TopKSumOne(grad[e], scale, &residual[e], &keys[e], bins);
  }
  const float4* grads = reinterpret_cast<const float4*>(grad + split.head);
  float4* residuals = reinterpret_cast<float4*>(residual + split.head);
  uint4* key_vectors = reinterpret_cast<uint4*>(keys + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    const float4 g = grads[v];
    float4 r = residuals[v];
    uint4 k;
    TopKSumOne(g.x, scale, &r.x, &k.x, bins);
    TopKSumOne(g.y, scale, &r.y, &k.y, bins);
    TopKSumOne(g.z, scale, &r.z, &k.z, bins);
    TopKSumOne(g.w, scale, &r.w, &k.w, bins);
    residuals[v] = r;
    key_vectors[v] = k;
  }
  FlushBins(bins, 1u << kTopDigitBits, histogram);
}

// The histogram of digit (key >> shift) over the keys whose higher digits are the threshold's;
// vectors of 4.
__device__ void CountDigit(uint32_t key, uint32_t higher, unsigned shift, unsigned bits,
                           uint32_t* bins) {
  if ((key >> (shift + bits)) == higher) atomicAdd(&bins[(key >> shift) & ((1u << bits) - 1)], 1u);
}

__global__ void TopKHistogramKernel(const uint32_t* keys, VectorSplit split,
                                    const uint32_t* scalars, unsigned shift, unsigned bits,
                                    uint32_t* histogram) {
  __shared__ uint32_t bins[kTopKBins];
  ClearBins(bins);
  const uint32_t higher = scalars[0] >> (shift + bits);
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    CountDigit(keys[split.ScalarElement(i)], higher, shift, bits, bins);
  }
  const uint4* key_vectors = reinterpret_cast<const uint4*>(keys + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    const uint4 k = key_vectors[v];
    CountDigit(k.x, higher, shift, bits, bins);
    CountDigit(k.y, higher, shift, bits, bins);
    CountDigit(k.z, higher, shift, bits, bins);
    CountDigit(k.w, higher, shift, bits, bins);
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

namespace {

constexpr size_t kScratchAlignment = 256;

size_t Aligned(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

cudaError_t ScanTempBytes(uint64_t capacity, size_t* bytes) {
  *bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(
      nullptr, *bytes, static_cast<const uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
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
  const VectorSplit sum_split = SplitForVectors(
      count, 4, {{grad, sizeof(float)}, {residual, sizeof(float)}, {scratch.keys, 4}});
  TopKSumKernel<<<HistogramBlocksFor<TopKSumKernel>(sum_split.items()), kThreads, 0, stream>>>(
      grad, scale, residual, scratch.keys, sum_split, scratch.histogram);
  const VectorSplit key_split = SplitForVectors(count, 4, {{scratch.keys, 4}});
  const unsigned histogram_blocks = HistogramBlocksFor<TopKHistogramKernel>(key_split.items());
  for (int digit = 0; digit < 3; ++digit) {
    if (digit > 0) {
      TopKHistogramKernel<<<histogram_blocks, kThreads, 0, stream>>>(
          scratch.keys, key_split, scratch.scalars, kTopKDigitShift[digit], kTopKDigitBits[digit],
          scratch.histogram);
    }
    TopKChooseDigitKernel<<<1, kChooseThreads, 0, stream>>>(
        scratch.histogram, kTopKDigitShift[digit], kTopKDigitBits[digit], scratch.scalars);
  }
  const uint64_t tiles = TilesFor(count);
  TopKTileCountKernel<<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(
      scratch.keys, count, scratch.scalars, scratch.tile_counts);
  size_t temp_bytes = scratch.temp_bytes;
  cudaError_t e =
      cub::DeviceScan::ExclusiveSum(scratch.temp, temp_bytes, scratch.tile_counts,
                                    scratch.tile_offsets, static_cast<int>(tiles), stream);
  if (e != cudaSuccess) return e;
  TopKTileWriteKernel<<<static_cast<unsigned>(tiles), kTileThreads, 0, stream>>>(
      scratch.keys, count, scratch.scalars, scratch.tile_offsets, indices);
  TopKGatherKernel<<<ResidentBlocks<TopKGatherKernel>(k), kThreads, 0, stream>>>(indices, k,
                                                                                 residual, values);
  return cudaGetLastError();
}

cudaError_t EnqueueScatterAdd(const uint32_t* indices, const float* values, uint64_t k, float* out,
                              cudaStream_t stream) {
  if (k == 0) return cudaSuccess;
  ScatterAddKernel<<<ResidentBlocks<ScatterAddKernel>(k), kThreads, 0, stream>>>(indices, values, k,
                                                                                 out);
  return cudaGetLastError();
}

}  // namespace cohort
