// The CUDA optimizer module: a shared library (cohort_cuda_optimizer.so) built only where CUDA is
// found, holding the built-in optimizers' update kernels behind DeviceUpdateKernels
// (runtime/optim/device_update_kernels.h). OpenCudaUpdateKernels loads it with dlopen, so the core
// binaries never link the CUDA runtime.
//
// The one exported function below is internal to the runtime (same compiler, same build): it is
// not part of the plugin ABI, and C++ types may cross it.
#ifndef COHORT_RUNTIME_OPTIM_CUDA_CUDA_OPTIMIZER_MODULE_H_
#define COHORT_RUNTIME_OPTIM_CUDA_CUDA_OPTIMIZER_MODULE_H_

#include <cstddef>

#include "runtime/optim/device_update_kernels.h"

#define COHORT_CUDA_UPDATE_KERNELS_OPEN_SYMBOL "cohort_cuda_update_kernels_open"

extern "C" {
// The update kernels on CUDA device `device`, enqueueing on `stream` (a cudaStream_t of that
// device that outlives them), owned by the caller (delete them before unloading the module), or
// NULL with a reason written into `error` (NUL-terminated, at most error_len bytes).
using cohort_cuda_update_kernels_open_fn = cohort::DeviceUpdateKernels* (*)(int device,
                                                                            void* stream,
                                                                            char* error,
                                                                            size_t error_len);
}

#endif  // COHORT_RUNTIME_OPTIM_CUDA_CUDA_OPTIMIZER_MODULE_H_
