// The Gloo collective backend: CPU collectives over Gloo's TCP transport, the group formed as a
// full mesh whose addresses are exchanged through a RendezvousStore.
//
//   GlooOptions options;
//   options.prefix = "trial-1/attempt-0";
//   absl::StatusOr<std::unique_ptr<CollectiveBackend>> backend =
//       CreateGlooBackend(rank, size, store, options);   // blocks until all `size` ranks join
//   if (backend.ok()) s = (*backend)->AllreduceSum(grads.data(), grads.size(),
//   COHORT_DTYPE_FLOAT32);
//
// Buffers are host memory. AllreduceSum adds float32, float64 and float16 (Gloo's half type);
// bfloat16 is UNIMPLEMENTED. Every operation is bounded by `options.timeout`: a peer that never
// answers gives DEADLINE_EXCEEDED, not a hang.
//
// Thread-safety: each backend object is used by one thread at a time. CreateGlooBackend may run
// concurrently (one call per rank, e.g. one thread per rank in tests).
#ifndef COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_BACKEND_H_
#define COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_BACKEND_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/rendezvous_store.h"

namespace cohort {

struct GlooOptions {
  // The address this rank listens on and publishes to its peers.
  std::string hostname = "127.0.0.1";
  // Bounds forming the group and each operation.
  std::chrono::milliseconds timeout{30000};
  // Namespace of this group's store keys, e.g. "trial-1/attempt-0"; must differ between groups
  // formed through the same store, since a key is written once.
  std::string prefix;
};

// Joins rank `rank` of `size` into a Gloo group through `store`; returns once every rank has
// joined. INVALID_ARGUMENT for rank >= size or size == 0; DEADLINE_EXCEEDED, naming the rank count
// and the timeout, when not every rank joins within `options.timeout`. `store` is only used
// during this call.
absl::StatusOr<std::unique_ptr<CollectiveBackend>> CreateGlooBackend(uint32_t rank, uint32_t size,
                                                                     RendezvousStore& store,
                                                                     const GlooOptions& options);

}  // namespace cohort

#endif  // COHORT_RUNTIME_COLLECTIVE_GLOO_GLOO_BACKEND_H_
