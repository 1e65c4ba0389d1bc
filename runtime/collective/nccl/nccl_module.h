// The NCCL collective module: a shared library (cohort_nccl_collective.so) built only where CUDA
// is found and loaded with dlopen by CreateNcclBackend (runtime/collective/nccl_loader.h), so the
// core binaries never link the CUDA runtime or NCCL and run on machines without a driver.
//
// The one exported function below is internal to the runtime (same compiler, same build): it is
// not part of the plugin ABI, and C++ types may cross it.
#ifndef COHORT_RUNTIME_COLLECTIVE_NCCL_NCCL_MODULE_H_
#define COHORT_RUNTIME_COLLECTIVE_NCCL_NCCL_MODULE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/collective/collective_backend.h"
#include "runtime/collective/rendezvous_store.h"

#define COHORT_NCCL_BACKEND_CREATE_SYMBOL "cohort_nccl_backend_create"

extern "C" {
// Joins rank `rank` of `size` into an NCCL communicator on CUDA device `device`; the unique id
// travels through `store` under "<key_prefix>/nccl-id" (rank 0 writes it). `stream` is a
// cudaStream_t to run on, or NULL for a stream the backend creates. Every wait is bounded by
// `timeout_ms`. Returns a backend owned by the caller (delete it before unloading the module), or
// NULL with an absl::StatusCode in `*code` and a reason in `error` (NUL-terminated, at most
// error_len bytes).
using cohort_nccl_backend_create_fn = cohort::CollectiveBackend* (*)(uint32_t rank, uint32_t size,
                                                                     cohort::RendezvousStore* store,
                                                                     const char* key_prefix,
                                                                     int device, void* stream,
                                                                     int64_t timeout_ms, int* code,
                                                                     char* error, size_t error_len);
}

#endif  // COHORT_RUNTIME_COLLECTIVE_NCCL_NCCL_MODULE_H_
