#include "runtime/worker/one_slot_exchange.h"

#include <string_view>

#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/nccl_loader.h"
#include "runtime/collective/rendezvous_store.h"

namespace cohort {

bool ExchangeAtOneSlotRequested(const char* value) {
  if (value == nullptr) return false;
  const std::string_view text(value);
  return text == "1" || text == "true" || text == "yes";
}

absl::StatusOr<std::unique_ptr<CollectiveBackend>> OneRankGradientGroup(
    const WorkerDevice& device, bool on_gpu, std::chrono::seconds timeout) {
  InMemoryRendezvousStore store;  // the group's one rank meets only itself
  if (on_gpu) {
    NcclOptions nccl;
    nccl.device = device.device.ordinal;
    nccl.stream = device.cuda->communication_stream();
    nccl.timeout = timeout;
    nccl.prefix = "one-slot/nccl";
    return CreateNcclBackend(0, 1, store, nccl);
  }
  GlooOptions gloo;
  gloo.timeout = timeout;
  gloo.prefix = "one-slot";
  return CreateGlooBackend(0, 1, store, gloo);
}

}  // namespace cohort
