#include "runtime/exchange/cuda/exchange_kernels.h"
#include "runtime/exchange/cuda/gradient_kernels.h"
#include "runtime/exchange/cuda/launch_shape.cuh"

namespace cohort {
namespace {

__global__ void DivideDoubleKernel(double* values, uint64_t count, double scale) {
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) values[i] = __dmul_rn(values[i], scale);
}

__device__ bool NonFinite(float value) { return !isfinite(value); }
__device__ bool NonFinite(double value) { return !isfinite(value); }

// Vectors of 4 floats; one store of the flag per block that met a non-finite value.
__global__ void FlagNonFiniteFloatKernel(const float* values, VectorSplit split, uint32_t* flag) {
  bool found = false;
  for (uint64_t i = FirstIndex(); i < split.head + split.tail; i += Stride()) {
    found = found || NonFinite(values[split.ScalarElement(i)]);
  }
  const float4* vectors = reinterpret_cast<const float4*>(values + split.head);
  for (uint64_t v = FirstIndex(); v < split.vectors; v += Stride()) {
    const float4 x = vectors[v];
    found = found || NonFinite(x.x) || NonFinite(x.y) || NonFinite(x.z) || NonFinite(x.w);
  }
  if (__syncthreads_or(found) && threadIdx.x == 0) *flag = 1;
}

__global__ void FlagNonFiniteDoubleKernel(const double* values, uint64_t count, uint32_t* flag) {
  bool found = false;
  for (uint64_t i = FirstIndex(); i < count; i += Stride()) found = found || NonFinite(values[i]);
  if (__syncthreads_or(found) && threadIdx.x == 0) *flag = 1;
}

}  // namespace

cudaError_t EnqueueDivide(void* grad, cohort_dtype dtype, uint64_t count, uint64_t divisor,
                          cudaStream_t stream) {
  if (divisor == 0) return cudaErrorInvalidValue;
  if (dtype == COHORT_DTYPE_FLOAT32) {
    return EnqueueScale(static_cast<float*>(grad), count, 1.0f / static_cast<float>(divisor),
                        stream);
  }
  if (dtype != COHORT_DTYPE_FLOAT64) return cudaErrorInvalidValue;
  if (divisor == 1 || count == 0) return cudaSuccess;
  DivideDoubleKernel<<<ResidentBlocks<DivideDoubleKernel>(count), kThreads, 0, stream>>>(
      static_cast<double*>(grad), count, 1.0 / static_cast<double>(divisor));
  return cudaGetLastError();
}

cudaError_t EnqueueFlagNonFinite(const void* values, cohort_dtype dtype, uint64_t count,
                                 uint32_t* flag, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (dtype == COHORT_DTYPE_FLOAT32) {
    const auto* floats = static_cast<const float*>(values);
    const VectorSplit split = SplitForVectors(count, 4, {{floats, sizeof(float)}});
    FlagNonFiniteFloatKernel<<<ResidentBlocks<FlagNonFiniteFloatKernel>(split.items()), kThreads, 0,
                               stream>>>(floats, split, flag);
  } else if (dtype == COHORT_DTYPE_FLOAT64) {
    FlagNonFiniteDoubleKernel<<<ResidentBlocks<FlagNonFiniteDoubleKernel>(count), kThreads, 0,
                                stream>>>(static_cast<const double*>(values), count, flag);
  }
  return cudaGetLastError();
}

}  // namespace cohort
