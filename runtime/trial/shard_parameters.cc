#include "runtime/trial/shard_parameters.h"

#include <vector>

#include "runtime/arena/arena_shard.h"
#include "runtime/arena/block_staging.h"

namespace cohort {

absl::Status BroadcastShardParameters(TensorArena& arena, CollectiveBackend& host_group,
                                      uint32_t shards, std::vector<char>& staged,
                                      const DeviceShardGroup& device) {
  bool device_ordered = false;  // the device group's stream waits for the optimizer's kernels
  for (const ArenaBlock& block : arena.blocks()) {
    const bool on_device_group = !OnHost(block) && device.group != nullptr;
    const bool in_place = OnHost(block) || on_device_group;
    CollectiveBackend& group = on_device_group ? *device.group : host_group;
    char* values = static_cast<char*>(block.data);
    if (on_device_group && !device_ordered && device.after_compute) {
      if (absl::Status ordered = device.after_compute(); !ordered.ok()) return ordered;
      device_ordered = true;
    }
    if (!in_place) {
      // The group moves host memory: this rank's range goes out from a host copy, and the block
      // comes back whole (this rank's range unchanged).
      if (staged.size() < BlockBytes(block)) staged.resize(BlockBytes(block));
      const ElementRange own = ShardRange(block.element_count, {group.rank(), shards});
      const uint64_t begin = own.begin * block.element_size;
      if (absl::Status copied = block.memory->CopyToHost(staged.data() + begin, values + begin,
                                                         own.count() * block.element_size);
          !copied.ok()) {
        return copied;
      }
      values = staged.data();
    }
    for (uint32_t owner = 0; owner < shards; ++owner) {
      const ElementRange range = ShardRange(block.element_count, {owner, shards});
      if (range.count() == 0) continue;
      if (absl::Status status = group.Broadcast(values + range.begin * block.element_size,
                                                range.count() * block.element_size, owner);
          !status.ok()) {
        return status;
      }
    }
    if (!in_place) {
      if (absl::Status copied = CopyBlockFromHost(block, BlockPart::kParameters, staged.data());
          !copied.ok()) {
        return copied;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
