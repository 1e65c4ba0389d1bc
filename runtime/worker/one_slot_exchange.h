// The gradient exchange of a one-slot trial, on request. A trial of one slot has nothing to
// exchange, so it runs none by default. With COHORT_EXCHANGE_AT_ONE_SLOT=1 in the worker's
// environment, its gradients still go through the engine, as DDP's do at world size 1: NCCL on
// a GPU, Gloo on CPUs, each in a group of one rank. The exchange's buckets, events and streams
// then run on one device, and its cost shows in the training reports. The sums are the gradients
// themselves, so the parameters come out bitwise the same as without it (averaging over
// `optimizations.aggregation_frequency` batches aside: the exchange scales by 1/n where the
// trial without it divides by n).
//
//   if (ExchangeAtOneSlotRequested(std::getenv(kExchangeAtOneSlotVariable))) {
//     absl::StatusOr<std::unique_ptr<CollectiveBackend>> group =
//         OneRankGradientGroup(device, on_gpu, timeout);
//   }
#ifndef COHORT_RUNTIME_WORKER_ONE_SLOT_EXCHANGE_H_
#define COHORT_RUNTIME_WORKER_ONE_SLOT_EXCHANGE_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/worker/worker_device.h"

namespace cohort {

inline constexpr char kExchangeAtOneSlotVariable[] = "COHORT_EXCHANGE_AT_ONE_SLOT";

// Whether the variable's value asks for it: "1", "true" or "yes".
bool ExchangeAtOneSlotRequested(const char* value);

// A group of this one rank for the gradients: NCCL on the device's communication stream when
// `on_gpu`, else Gloo. Each operation is bounded by `timeout`.
absl::StatusOr<std::unique_ptr<CollectiveBackend>> OneRankGradientGroup(
    const WorkerDevice& device, bool on_gpu, std::chrono::seconds timeout);

}  // namespace cohort

#endif  // COHORT_RUNTIME_WORKER_ONE_SLOT_EXCHANGE_H_
