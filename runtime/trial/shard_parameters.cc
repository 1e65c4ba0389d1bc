#include "runtime/trial/shard_parameters.h"

#include "runtime/arena/arena_shard.h"

namespace cohort {

absl::Status BroadcastShardParameters(TensorArena& arena, CollectiveBackend& group,
                                      uint32_t shards) {
  for (const ArenaBlock& block : arena.blocks()) {
    for (uint32_t owner = 0; owner < shards; ++owner) {
      const ElementRange range = ShardRange(block.element_count, {owner, shards});
      if (range.count() == 0) continue;
      if (absl::Status status =
              group.Broadcast(static_cast<char*>(block.data) + range.begin * block.element_size,
                              range.count() * block.element_size, owner);
          !status.ok()) {
        return status;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
