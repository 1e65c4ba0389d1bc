// The CUDA kernels behind CudaGradientOps (device_gradient_ops.h), behind host functions that
// enqueue them on a stream and return the launch error. Products are rounded one at a time, as
// on the CPU.
//
//   EnqueueDivide(grad, COHORT_DTYPE_FLOAT32, n, 4, stream);     // grad[i] *= 1.0f / 4
//   EnqueueFlagNonFinite(grad, COHORT_DTYPE_FLOAT32, n, flag, stream);
//
// Thread-safety: the functions keep no state.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_GRADIENT_KERNELS_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_GRADIENT_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cohort/plugin.h"

namespace cohort {

// grad[i] *= (1 / divisor computed in the dtype), for float32 or float64 (nothing for a divisor
// of 1); cudaErrorInvalidValue for another dtype or a divisor of 0.
cudaError_t EnqueueDivide(void* grad, cohort_dtype dtype, uint64_t count, uint64_t divisor,
                          cudaStream_t stream);

// Sets *flag (device memory) to 1 when any of the `count` float32 or float64 values at `values`
// is a NaN or an infinity, and leaves it as it was otherwise; nothing for another dtype.
cudaError_t EnqueueFlagNonFinite(const void* values, cohort_dtype dtype, uint64_t count,
                                 uint32_t* flag, cudaStream_t stream);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_GRADIENT_KERNELS_H_
