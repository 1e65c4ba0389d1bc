#include "runtime/exchange/compression/float_bits.h"
#include "runtime/exchange/cuda/device_arith.cuh"
#include "runtime/exchange/cuda/exchange_kernels.h"
#include "runtime/exchange/cuda/launch_shape.cuh"

namespace cohort {
namespace {

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

}  // namespace cohort
