// The CUDA kernel behind CudaValueReader::Capture: one float32 or float64 copied, on a stream,
// into an 8-byte slot. A kernel rather than a device-to-device cudaMemcpyAsync: a copy engine
// would hand the stream over and back twice per value, which a small step feels.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cohort {

// *slot's first `bytes` (4 or 8) = those at `value` (aligned to `bytes`); cudaErrorInvalidValue
// for another size.
cudaError_t EnqueueCopyValue(const void* value, uint32_t bytes, uint64_t* slot,
                             cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_
