// The CUDA kernel behind CudaValueReader: up to ValueCopies::kMax float32 or float64 values copied
// into 8-byte slots by one launch on a stream. A kernel rather than device-to-device
// cudaMemcpyAsync calls: one launch for a batch's values, and no copy engine to hand the stream
// to and back.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cohort {

// Copy i: the `bytes[i]` (4 or 8) at `from[i]` (aligned to them) into the first bytes of *to[i].
struct ValueCopies {
  static constexpr uint32_t kMax = 16;
  const void* from[kMax] = {};
  uint64_t* to[kMax] = {};
  uint32_t bytes[kMax] = {};
  uint32_t count = 0;
};

// Enqueues the copies (nothing for none); cudaErrorInvalidValue for a size other than 4 or 8 or
// more than kMax copies.
cudaError_t EnqueueCopyValues(const ValueCopies& copies, cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_VALUE_KERNELS_H_
