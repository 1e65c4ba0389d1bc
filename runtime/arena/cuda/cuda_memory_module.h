// The CUDA memory module: a shared library (cohort_cuda_memory.so) built only where CUDA is found,
// and loaded with dlopen by DefaultMemoryProvider when a tensor is registered on a CUDA device.
// Keeping it out of the core binaries means they never link the CUDA runtime and run on machines
// without a driver.
//
// The exported functions below are internal to the runtime (same compiler, same build): it is
// not part of the plugin ABI.
#ifndef COHORT_RUNTIME_ARENA_CUDA_CUDA_MEMORY_MODULE_H_
#define COHORT_RUNTIME_ARENA_CUDA_CUDA_MEMORY_MODULE_H_

#include <cstddef>

#include "runtime/arena/device_memory.h"

#define COHORT_CUDA_MEMORY_OPEN_SYMBOL "cohort_cuda_memory_open"
#define COHORT_CUDA_DEVICE_COUNT_SYMBOL "cohort_cuda_device_count"

extern "C" {
// Memory on CUDA device `ordinal`, owned by the caller (delete it before unloading the module),
// or NULL with a reason written into `error` (NUL-terminated, at most error_len bytes). With a
// `stream` (a cudaStream_t on that device, outliving the memory), Zero enqueues its memset there.
using cohort_cuda_memory_open_fn = cohort::DeviceMemory* (*)(int ordinal, void* stream, char* error,
                                                             size_t error_len);

// The number of CUDA devices this process sees (CUDA_VISIBLE_DEVICES applied), or -1 with the
// CUDA runtime's error written into `error` (NUL-terminated, at most error_len bytes).
using cohort_cuda_device_count_fn = int (*)(char* error, size_t error_len);
}

#endif  // COHORT_RUNTIME_ARENA_CUDA_CUDA_MEMORY_MODULE_H_
