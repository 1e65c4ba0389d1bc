// Moving an arena block's parameters or gradients between its memory and the host, through the
// block's DeviceMemory: a plain copy for a CPU block, a device copy (after the device's pending
// work) for a GPU block. What reads or writes whole blocks on the host (checkpoints, the first
// broadcast of the parameters, the non-finite guard) goes through here, so it works wherever the
// plugin put its tensors.
//
//   std::vector<char> host(BlockBytes(block));
//   absl::Status s = CopyBlockToHost(block, BlockPart::kParameters, host.data());
//
// Thread-safety: as DeviceMemory; nothing may write the block meanwhile.
#ifndef COHORT_RUNTIME_ARENA_BLOCK_STAGING_H_
#define COHORT_RUNTIME_ARENA_BLOCK_STAGING_H_

#include <cstddef>

#include "absl/status/status.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/arena/tensor_arena.h"

namespace cohort {

enum class BlockPart { kParameters, kGradients };

// The bytes of one part of `block`: element_count * element_size.
inline size_t BlockBytes(const ArenaBlock& block) {
  return block.element_count * block.element_size;
}

// Whether the block's memory is host memory the CPU may read directly.
inline bool OnHost(const ArenaBlock& block) { return block.device.kind == COHORT_DEVICE_CPU; }

// Copies the part into `to` (BlockBytes(block) bytes of host memory); through `staged` when given
// (a checkpoint's capture: the bytes reach `to` at its Land).
absl::Status CopyBlockToHost(const ArenaBlock& block, BlockPart part, void* to,
                             StagedHostCopies* staged = nullptr);

// Copies BlockBytes(block) bytes of host memory at `from` into the part.
absl::Status CopyBlockFromHost(const ArenaBlock& block, BlockPart part, const void* from);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_BLOCK_STAGING_H_
