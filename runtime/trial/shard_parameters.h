// ZeRO's parameter step: after a sharded optimizer (arena_shard.h) has updated this rank's
// range of every arena block, each range goes from its owner to every other rank, so that every
// rank holds the whole stepped arena again, bitwise the same on each.
//
//   optimizer->Step();                                           // this rank's ranges
//   absl::Status s = BroadcastShardParameters(arena, *group, 4, staging);  // everyone's
//
// One broadcast per block and owning rank, in the same order on every rank. A block in host
// memory is broadcast in place over the host group (Gloo). A block in device memory is broadcast
// in place over the device's group (NCCL) when one is given, once that group's stream waits for
// the optimizer's kernels; otherwise it goes through a host copy in `staging` over the host group
// (this rank's range copied out, the whole block copied back), as the first broadcast of the
// parameters does (rank_sync.h). The caller keeps `staging` from step to step, so that a step
// allocates nothing once it is as large as the largest block.
//
// Thread-safety: needs exclusive use of the arena's parameters and of the groups.
#ifndef COHORT_RUNTIME_TRIAL_SHARD_PARAMETERS_H_
#define COHORT_RUNTIME_TRIAL_SHARD_PARAMETERS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"

namespace cohort {

// GPU slots: the group that moves device memory, and what makes its stream wait for the work
// already enqueued on the device (DeviceExchange::CommunicationAfterCompute).
struct DeviceShardGroup {
  CollectiveBackend* group = nullptr;
  std::function<absl::Status()> after_compute;
};

// Broadcasts, for every block, each of the `shards` ranges (ShardRange) from the rank that owns
// it, the group's rank of the same number. The first failed broadcast's error.
absl::Status BroadcastShardParameters(TensorArena& arena, CollectiveBackend& group, uint32_t shards,
                                      std::vector<char>& staging,
                                      const DeviceShardGroup& device = {});

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_SHARD_PARAMETERS_H_
