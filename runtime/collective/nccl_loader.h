// CreateNcclBackend: the NCCL collective backend, from the NCCL module that is loaded on first use
// (see runtime/collective/nccl/nccl_module.h). The module is looked for at $COHORT_NCCL_MODULE,
// then in the build tree, then in the install tree, and stays loaded for the life of the process.
//
//   NcclOptions options;
//   options.device = local_rank;
//   options.prefix = "trial-1/attempt-0";
//   absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
//       CreateNcclBackend(rank, size, store, options);   // UNAVAILABLE without a GPU or module
//
// Buffers handed to the backend are device memory on `options.device`. Each operation is
// enqueued on the stream and waited for (bounded by `options.timeout`) before it returns; a
// timeout aborts the communicator, and later calls fail with FAILED_PRECONDITION.
//
// Thread-safety: CreateNcclBackend may run concurrently; each backend object is used by one thread
// at a time.
#ifndef COHORT_RUNTIME_COLLECTIVE_NCCL_LOADER_H_
#define COHORT_RUNTIME_COLLECTIVE_NCCL_LOADER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/rendezvous_store.h"

namespace cohort {

struct NcclOptions {
  // The CUDA device ordinal this rank runs on.
  int device = 0;
  // A cudaStream_t to enqueue on, owned by the caller and outliving the backend; nullptr lets the
  // backend create its own.
  void* stream = nullptr;
  // Bounds forming the group and each operation.
  std::chrono::milliseconds timeout{30000};
  // Namespace of this group's store keys, e.g. "trial-1/attempt-0"; must differ between groups.
  std::string prefix;
};

// Joins rank `rank` of `size` into an NCCL group through `store`; returns once every rank has
// joined. INVALID_ARGUMENT for rank >= size or size == 0; UNAVAILABLE where the module or a CUDA
// device is missing; DEADLINE_EXCEEDED when not every rank joins within `options.timeout`.
absl::StatusOr<std::unique_ptr<CollectiveBackend>> CreateNcclBackend(uint32_t rank, uint32_t size,
                                                                     RendezvousStore& store,
                                                                     const NcclOptions& options);

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_NCCL_LOADER_H_
