#include "runtime/optim/device_arena_optimizer.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/device_memory.h"
#include "runtime/optim/optimizer_state.h"

namespace cohort {
namespace {

size_t BuffersPerBlock(const OptimizerOptions& options) {
  if (options.kind == OptimizerOptions::Kind::kSgd) return options.momentum > 0 ? 1 : 0;
  return 2;
}

// Buffer `index` of block `block` of a host OptimizerState, as bytes.
void* HostBuffer(OptimizerState& state, const ArenaBlock& block, size_t b, size_t index) {
  if (block.dtype == COHORT_DTYPE_FLOAT64) return state.buffer<double>(b, index);
  return state.buffer<float>(b, index);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceArenaOptimizer>> DeviceArenaOptimizer::Create(
    const OptimizerOptions& options, TensorArena& arena, DeviceUpdateKernels& kernels,
    ArenaShard shard) {
  std::unique_ptr<DeviceArenaOptimizer> optimizer(
      new DeviceArenaOptimizer(options, arena, kernels, BuffersPerBlock(options), shard));
  for (size_t b = 0; b < arena.blocks().size(); ++b) {
    const ArenaBlock& block = arena.blocks()[b];
    std::array<void*, 2>& buffers = optimizer->buffers_.emplace_back();
    buffers.fill(nullptr);
    for (size_t i = 0; i < optimizer->buffers_per_block_; ++i) {
      absl::StatusOr<void*> allocated =
          block.memory->Allocate(optimizer->BufferElements(b) * block.element_size);  // zeroed
      if (!allocated.ok()) return allocated.status();
      buffers[i] = *allocated;
    }
  }
  return optimizer;
}

DeviceArenaOptimizer::DeviceArenaOptimizer(const OptimizerOptions& options, TensorArena& arena,
                                           DeviceUpdateKernels& kernels, size_t buffers_per_block,
                                           ArenaShard shard)
    : options_(options),
      arena_(arena),
      kernels_(kernels),
      buffers_per_block_(buffers_per_block),
      shard_(shard) {}

uint64_t DeviceArenaOptimizer::BufferElements(size_t b) const {
  return ShardChunk(arena_.blocks()[b].element_count, shard_.size);  // the block when whole
}

uint64_t DeviceArenaOptimizer::state_bytes() const {
  uint64_t bytes = 0;
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    bytes += BufferElements(b) * arena_.blocks()[b].element_size * buffers_per_block_;
  }
  return bytes;
}

DeviceArenaOptimizer::~DeviceArenaOptimizer() {
  for (size_t b = 0; b < buffers_.size(); ++b) {
    for (void* buffer : buffers_[b]) arena_.blocks()[b].memory->Free(buffer);
  }
}

absl::Status DeviceArenaOptimizer::Step() {
  ++steps_;
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    const ElementRange range = ShardRange(block.element_count, shard_);
    if (range.count() == 0) continue;  // a shard past a small block's end
    const uint64_t skipped = range.begin * block.element_size;
    DeviceBlockStep step;
    step.dtype = block.dtype;
    step.params = static_cast<char*>(block.data) + skipped;
    step.grads = static_cast<const char*>(block.grad) + skipped;
    step.buffers[0] = buffers_[b][0];
    step.buffers[1] = buffers_[b][1];
    step.count = range.count();
    step.step = steps_;
    if (absl::Status status = kernels_.Step(options_, step); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("optimizer step ", steps_, " on ", DeviceName(block.device),
                                       ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

std::string DeviceArenaOptimizer::SaveState() const {
  std::string out;
  SaveStateInto(out, /*sealed=*/true, nullptr);
  return out;
}

absl::Status DeviceArenaOptimizer::HostStateInto(std::optional<OptimizerState>& state,
                                                 StagedHostCopies* staged) const {
  if (!state) state.emplace(options_.kind, arena_, buffers_per_block_, shard_);
  state->set_steps(steps_);
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      if (absl::Status copied =
              CopyToHostVia(staged, *block.memory, HostBuffer(*state, block, b, i), buffers_[b][i],
                            BufferElements(b) * block.element_size);
          !copied.ok()) {
        return copied;
      }
    }
  }
  return absl::OkStatus();
}

void DeviceArenaOptimizer::SaveStateInto(std::string& out, bool sealed,
                                         StagedHostCopies* staged) const {
  out.clear();
  if (!shard_.whole()) return;
  // Each buffer is copied from the device into its place in the bytes, straight or staged.
  const absl::Status encoded = OptimizerState::EncodeFilledInto(
      out, options_.kind, steps_, arena_, buffers_per_block_,
      [this, staged](size_t b, size_t i, char* dest) {
        const ArenaBlock& block = arena_.blocks()[b];
        // The bytes land later: only where the encoding leaves them as they are.
        return CopyToHostVia(std::endian::native == std::endian::little ? staged : nullptr,
                             *block.memory, dest, buffers_[b][i],
                             block.element_count * block.element_size);
      },
      sealed);
  if (!encoded.ok()) out.clear();
}

absl::Status DeviceArenaOptimizer::SaveWholeStateInto(const OptimizerState::PieceMover& move,
                                                      std::string* out, bool sealed) const {
  if (shard_.whole()) return Optimizer::SaveWholeStateInto(move, out, sealed);
  std::optional<OptimizerState> state;
  if (absl::Status copied = HostStateInto(state, nullptr); !copied.ok()) return copied;
  return state->GatherWholeInto(move, out, sealed);
}

absl::Status DeviceArenaOptimizer::LayOutWholeStateInto(std::string& whole,
                                                        StagedHostCopies* staged) const {
  if (shard_.whole()) return Optimizer::LayOutWholeStateInto(whole, staged);
  // Each buffer's range of this rank (0) is copied from the device into its place in the bytes.
  return OptimizerState::LayOutFilledInto(
      whole, options_.kind, steps_, arena_, buffers_per_block_, shard_,
      [this, staged](size_t b, size_t i, char* dest) {
        const ArenaBlock& block = arena_.blocks()[b];
        return CopyToHostVia(staged, *block.memory, dest, buffers_[b][i],
                             ShardRange(block.element_count, shard_).count() * block.element_size);
      });
}

absl::Status DeviceArenaOptimizer::ReceiveWholeStateInto(const OptimizerState::PieceMover& move,
                                                         std::string& whole, bool sealed) const {
  if (shard_.whole()) return Optimizer::ReceiveWholeStateInto(move, whole, sealed);
  return OptimizerState::ReceivePiecesInto(arena_, buffers_per_block_, shard_, move, whole, sealed);
}

absl::Status DeviceArenaOptimizer::CopyShardStateInto(std::optional<OptimizerState>& copy,
                                                      StagedHostCopies* staged) const {
  if (shard_.whole()) return Optimizer::CopyShardStateInto(copy, staged);
  return HostStateInto(copy, staged);
}

absl::Status DeviceArenaOptimizer::LoadState(absl::string_view bytes) {
  OptimizerState state(options_.kind, arena_, buffers_per_block_, shard_);
  if (absl::Status decoded = state.Decode(bytes); !decoded.ok()) return decoded;
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      if (absl::Status copied =
              block.memory->CopyFromHost(buffers_[b][i], HostBuffer(state, block, b, i),
                                         BufferElements(b) * block.element_size);
          !copied.ok()) {
        return copied;
      }
    }
  }
  steps_ = state.steps();
  return absl::OkStatus();
}

}  // namespace cohort
