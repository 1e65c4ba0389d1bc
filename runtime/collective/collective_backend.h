// CollectiveBackend: the one interface the gradient exchange talks to, whatever engine moves the
// bytes (Gloo over TCP on CPUs, NCCL on GPUs). A backend joins `size()` processes (ranks) of one
// trial; every rank calls the same operations in the same order with matching arguments, and each
// call returns once this rank's part of the operation is complete.
//
//   std::unique_ptr<CollectiveBackend> backend = ...;   // CreateGlooBackend, CreateNcclBackend
//   std::vector<float> grads = ...;
//   absl::Status s = backend->AllreduceSum(grads.data(), grads.size(), COHORT_DTYPE_FLOAT32);
//
// Memory is host memory for Gloo and device memory for NCCL (see the factory of each backend).
// A failed operation leaves the buffers' contents unspecified; after a DEADLINE_EXCEEDED or
// UNAVAILABLE the group should be torn down and formed again.
//
// Thread-safety: one thread at a time per backend object; different objects are independent.
#ifndef COHORT_RUNTIME_COLLECTIVE_COLLECTIVE_BACKEND_H_
#define COHORT_RUNTIME_COLLECTIVE_COLLECTIVE_BACKEND_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "cohort/plugin.h"

namespace cohort {

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;

  // This process's place in the group, in [0, size()).
  virtual uint32_t rank() const = 0;
  // The number of processes in the group.
  virtual uint32_t size() const = 0;
  // The engine: "gloo", "nccl".
  virtual std::string name() const = 0;

  // Replaces `count` elements of `data` with their sum over all ranks. Every rank passes the same
  // count and dtype. A dtype the engine cannot add is INVALID_ARGUMENT (not an SDK dtype) or
  // UNIMPLEMENTED (an SDK dtype this engine lacks); both messages name the dtype.
  virtual absl::Status AllreduceSum(void* data, uint64_t count, cohort_dtype dtype) = 0;

  // Replaces `count` elements of `data` on rank `root` with their sum over all ranks; the other
  // ranks' `data` is left unspecified (the engine may work in it). Dtypes as for AllreduceSum.
  virtual absl::Status ReduceSum(void* data, uint64_t count, cohort_dtype dtype, uint32_t root) = 0;

  // Copies `bytes` bytes of `data` on rank `root` into `data` on every other rank.
  virtual absl::Status Broadcast(void* data, uint64_t bytes, uint32_t root) = 0;

  // Every rank contributes `bytes_per_rank` bytes from `in`; `out` receives size() * bytes_per_rank
  // bytes, rank r's contribution at offset r * bytes_per_rank. `in` may be that slot of `out`.
  virtual absl::Status Allgather(const void* in, uint64_t bytes_per_rank, void* out) = 0;

  // Every rank sends `bytes_per_rank` bytes from `in` to rank `root`, whose `out` receives
  // size() * bytes_per_rank bytes, rank r's at offset r * bytes_per_rank; root's `in` may be its
  // own slot of `out`. `out` is read on `root` alone (nullptr elsewhere). Unlike Allgather, no
  // rank but `root` receives anything.
  virtual absl::Status Gather(const void* in, uint64_t bytes_per_rank, void* out,
                              uint32_t root) = 0;

  // Returns once every rank has entered Barrier.
  virtual absl::Status Barrier() = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_COLLECTIVE_BACKEND_H_
