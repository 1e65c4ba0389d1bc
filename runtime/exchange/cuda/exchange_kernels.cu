#include "runtime/exchange/cuda/exchange_kernels.h"

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "runtime/exchange/cuda/launch_shape.cuh"
#include "runtime/exchange/float_bits.h"

namespace cohort {
namespace {

__device__ float Scaled(float value, float scale) {
  return scale == 1.0f ? value : __fmul_rn(value, scale);
}

template <WireFormat kFormat>
__device__ uint16_t Encode(float value, float scale) {
  const float scaled = Scaled(value, scale);
  return kFormat == WireFormat::kFloat16 ? FloatToHalf(scaled) : FloatToBfloat16(scaled);
}

template <WireFormat kFormat>
__device__ float Decode(uint16_t word) {
  return kFormat == WireFormat::kFloat16 ? HalfToFloat(word) : Bfloat16ToFloat(word);
}

// Two 16-bit words in one 32-bit one, the first at the lower address.
__device__ uint32_t Pack(uint16_t first, uint16_t second) {
  return uint32_t{first} | (uint32_t{second} << 16);
}

// Vectors of 4 floats.
__global__ void ScaleKernel(float* data, float scale, VectorSplit split) {
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    const uint64_t e = split.ScalarElement(i);
    data[e] = __fmul_rn(data[e], scale);
  }
  float4* body = reinterpret_cast<float4*>(data + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    float4 x = body[v];
    x.x = __fmul_rn(x.x, scale);
    x.y = __fmul_rn(x.y, scale);
    x.z = __fmul_rn(x.z, scale);
    x.w = __fmul_rn(x.w, scale);
    body[v] = x;
  }
}

// Vectors of 4 elements: one float4 in, one uint2 of 4 words out.
template <WireFormat kFormat>
__global__ void EncodeKernel(const float* in, float scale, uint16_t* out, VectorSplit split) {
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    const uint64_t e = split.ScalarElement(i);
    out[e] = Encode<kFormat>(in[e], scale);
  }
  const float4* floats = reinterpret_cast<const float4*>(in + split.head);
  uint2* words = reinterpret_cast<uint2*>(out + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    const float4 x = floats[v];
    words[v] = make_uint2(Pack(Encode<kFormat>(x.x, scale), Encode<kFormat>(x.y, scale)),
                          Pack(Encode<kFormat>(x.z, scale), Encode<kFormat>(x.w, scale)));
  }
}

// Vectors of 4 elements: one uint2 of 4 words in, one float4 out.
template <WireFormat kFormat>
__global__ void DecodeKernel(const uint16_t* in, float* out, VectorSplit split) {
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    const uint64_t e = split.ScalarElement(i);
    out[e] = Decode<kFormat>(in[e]);
  }
  const uint2* words = reinterpret_cast<const uint2*>(in + split.head);
  float4* floats = reinterpret_cast<float4*>(out + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    const uint2 w = words[v];
    floats[v] = make_float4(Decode<kFormat>(w.x & 0xffffu), Decode<kFormat>(w.x >> 16),
                            Decode<kFormat>(w.y & 0xffffu), Decode<kFormat>(w.y >> 16));
  }
}

// Vectors of 4 floats.
__global__ void AddKernel(float* inout, const float* addend, VectorSplit split) {
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    const uint64_t e = split.ScalarElement(i);
    inout[e] = __fadd_rn(inout[e], addend[e]);
  }
  float4* sums = reinterpret_cast<float4*>(inout + split.head);
  const float4* addends = reinterpret_cast<const float4*>(addend + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    float4 x = sums[v];
    const float4 y = addends[v];
    x.x = __fadd_rn(x.x, y.x);
    x.y = __fadd_rn(x.y, y.y);
    x.z = __fadd_rn(x.z, y.z);
    x.w = __fadd_rn(x.w, y.w);
    sums[v] = x;
  }
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

template <auto kKernel>
unsigned HistogramBlocksFor(uint64_t items) {
  return static_cast<unsigned>(std::min<uint64_t>(ResidentBlocks<kKernel>(items), kHistogramBlocks));
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

cudaError_t EnqueueScale(float* data, uint64_t count, float scale, cudaStream_t stream) {
  if (scale == 1.0f || count == 0) return cudaSuccess;
  const VectorSplit split = SplitForVectors(count, 4, {{data, sizeof(float)}});
  ScaleKernel<<<ResidentBlocks<ScaleKernel>(split.items()), kThreads, 0, stream>>>(data, scale,
                                                                                   split);
  return cudaGetLastError();
}

namespace {

template <WireFormat kFormat>
void LaunchEncode(const float* in, float scale, uint16_t* out, const VectorSplit& split,
                  cudaStream_t stream) {
  constexpr auto kKernel = EncodeKernel<kFormat>;
  kKernel<<<ResidentBlocks<kKernel>(split.items()), kThreads, 0, stream>>>(in, scale, out, split);
}

template <WireFormat kFormat>
void LaunchDecode(const uint16_t* in, float* out, const VectorSplit& split, cudaStream_t stream) {
  constexpr auto kKernel = DecodeKernel<kFormat>;
  kKernel<<<ResidentBlocks<kKernel>(split.items()), kThreads, 0, stream>>>(in, out, split);
}

}  // namespace

cudaError_t EnqueueEncode(WireFormat format, const float* in, uint64_t count, float scale,
                          uint16_t* out, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const VectorSplit split =
      SplitForVectors(count, 4, {{in, sizeof(float)}, {out, sizeof(uint16_t)}});
  if (format == WireFormat::kFloat16) {
    LaunchEncode<WireFormat::kFloat16>(in, scale, out, split, stream);
  } else {
    LaunchEncode<WireFormat::kBfloat16>(in, scale, out, split, stream);
  }
  return cudaGetLastError();
}

cudaError_t EnqueueDecode(WireFormat format, const uint16_t* in, uint64_t count, float* out,
                          cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const VectorSplit split =
      SplitForVectors(count, 4, {{in, sizeof(uint16_t)}, {out, sizeof(float)}});
  if (format == WireFormat::kFloat16) {
    LaunchDecode<WireFormat::kFloat16>(in, out, split, stream);
  } else {
    LaunchDecode<WireFormat::kBfloat16>(in, out, split, stream);
  }
  return cudaGetLastError();
}

cudaError_t EnqueueAdd(float* inout, const float* addend, uint64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const VectorSplit split =
      SplitForVectors(count, 4, {{inout, sizeof(float)}, {addend, sizeof(float)}});
  AddKernel<<<ResidentBlocks<AddKernel>(split.items()), kThreads, 0, stream>>>(inout, addend,
                                                                               split);
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
  const VectorSplit sum_split = SplitForVectors(
      count, 4, {{grad, sizeof(float)}, {residual, sizeof(float)}, {scratch.keys, 4}});
  TopKSumKernel<<<HistogramBlocksFor<TopKSumKernel>(sum_split.items()), kThreads, 0, stream>>>(
      grad, scale, residual, scratch.keys, sum_split, scratch.histogram);
  const VectorSplit key_split = SplitForVectors(count, 4, {{scratch.keys, 4}});
  const unsigned histogram_blocks = HistogramBlocksFor<TopKHistogramKernel>(key_split.items());
  for (int digit = 0; digit < 3; ++digit) {
    if (digit > 0) {
      TopKHistogramKernel<<<histogram_blocks, kThreads, 0, stream>>>(
          scratch.keys, key_split, scratch.scalars, kTopKDigitShift[digit],
          kTopKDigitBits[digit], scratch.histogram);
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
  TopKGatherKernel<<<ResidentBlocks<TopKGatherKernel>(k), kThreads, 0, stream>>>(indices, k, residual, values);
  return cudaGetLastError();
}

cudaError_t EnqueueScatterAdd(const uint32_t* indices, const float* values, uint64_t k, float* out,
                              cudaStream_t stream) {
  if (k == 0) return cudaSuccess;
  ScatterAddKernel<<<ResidentBlocks<ScatterAddKernel>(k), kThreads, 0, stream>>>(indices, values, k, out);
  return cudaGetLastError();
}

}  // namespace cohort
