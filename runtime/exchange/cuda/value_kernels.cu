#include "runtime/exchange/cuda/value_kernels.h"

namespace cohort {
namespace {

__global__ void CopyWordKernel(const uint32_t* value, uint32_t* slot) { *slot = *value; }
__global__ void CopyDoubleWordKernel(const uint64_t* value, uint64_t* slot) { *slot = *value; }

}  // namespace

cudaError_t EnqueueCopyValue(const void* value, uint32_t bytes, uint64_t* slot,
                             cudaStream_t stream) {
  if (bytes == 4) {
    CopyWordKernel<<<1, 1, 0, stream>>>(static_cast<const uint32_t*>(value),
                                        reinterpret_cast<uint32_t*>(slot));
  } else if (bytes == 8) {
    CopyDoubleWordKernel<<<1, 1, 0, stream>>>(static_cast<const uint64_t*>(value), slot);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace cohort
