#include "runtime/exchange/cuda/value_kernels.h"

namespace cohort {
namespace {

// Thread i makes copy i.
__global__ void CopyValuesKernel(ValueCopies copies) {
  const uint32_t i = threadIdx.x;
  if (i >= copies.count) return;
  if (copies.bytes[i] == 4) {
    *reinterpret_cast<uint32_t*>(copies.to[i]) = *static_cast<const uint32_t*>(copies.from[i]);
  } else {
    *copies.to[i] = *static_cast<const uint64_t*>(copies.from[i]);
  }
}

}  // namespace

cudaError_t EnqueueCopyValues(const ValueCopies& copies, cudaStream_t stream) {
  if (copies.count > ValueCopies::kMax) return cudaErrorInvalidValue;
  for (uint32_t i = 0; i < copies.count; ++i) {
    if (copies.bytes[i] != 4 && copies.bytes[i] != 8) return cudaErrorInvalidValue;
  }
  if (copies.count == 0) return cudaSuccess;
  CopyValuesKernel<<<1, ValueCopies::kMax, 0, stream>>>(copies);
  return cudaGetLastError();
}

}  // namespace cohort
