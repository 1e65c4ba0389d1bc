// The CUDA exchange module: a shared library (cohort_cuda_exchange.so) built only where CUDA is
// found, holding the kernels and reducers behind DeviceExchange
// (runtime/exchange/device_exchange.h). OpenCudaExchange loads it with dlopen, so the core binaries
// never link the CUDA runtime, NCCL or cuBLAS.
//
// The one exported function below is internal to the runtime (same compiler, same build): it is
// not part of the plugin ABI, and C++ types may cross it.
#ifndef COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_EXCHANGE_MODULE_H_
#define COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_EXCHANGE_MODULE_H_

#include <cstddef>

#include "runtime/exchange/device_exchange.h"

#define COHORT_CUDA_EXCHANGE_OPEN_SYMBOL "cohort_cuda_exchange_open"

extern "C" {
// The exchange on CUDA device `device`, owned by the caller (delete it before unloading the
// module), or NULL with a reason written into `error` (NUL-terminated, at most error_len bytes).
using cohort_cuda_exchange_open_fn = cohort::DeviceExchange* (*)(int device, char* error,
                                                                 size_t error_len);
}

#endif  // COHORT_RUNTIME_EXCHANGE_CUDA_CUDA_EXCHANGE_MODULE_H_
