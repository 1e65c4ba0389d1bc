#include "runtime/optim/device_arena_optimizer.h"

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
    const OptimizerOptions& options, TensorArena& arena, DeviceUpdateKernels& kernels) {
  std::unique_ptr<DeviceArenaOptimizer> optimizer(
      new DeviceArenaOptimizer(options, arena, kernels, BuffersPerBlock(options)));
  for (const ArenaBlock& block : arena.blocks()) {
    std::array<void*, 2>& buffers = optimizer->buffers_.emplace_back();
    buffers.fill(nullptr);
    for (size_t i = 0; i < optimizer->buffers_per_block_; ++i) {
      absl::StatusOr<void*> allocated = block.memory->Allocate(BlockBytes(block));  // zeroed
      if (!allocated.ok()) return allocated.status();
      buffers[i] = *allocated;
    }
  }
  return optimizer;
}

DeviceArenaOptimizer::DeviceArenaOptimizer(const OptimizerOptions& options, TensorArena& arena,
                                           DeviceUpdateKernels& kernels, size_t buffers_per_block)
    : options_(options), arena_(arena), kernels_(kernels), buffers_per_block_(buffers_per_block) {}

DeviceArenaOptimizer::~DeviceArenaOptimizer() {
  for (size_t b = 0; b < buffers_.size(); ++b) {
    for (void* buffer : buffers_[b]) arena_.blocks()[b].memory->Free(buffer);
  }
}

absl::Status DeviceArenaOptimizer::Step() {
  ++steps_;
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    DeviceBlockStep step;
    step.dtype = block.dtype;
    step.params = block.data;
    step.grads = block.grad;
    step.buffers[0] = buffers_[b][0];
    step.buffers[1] = buffers_[b][1];
    step.count = block.element_count;
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
  SaveStateInto(out, /*sealed=*/true);
  return out;
}

void DeviceArenaOptimizer::SaveStateInto(std::string& out, bool sealed) const {
  out.clear();
  OptimizerState state(options_.kind, arena_, buffers_per_block_);
  state.set_steps(steps_);
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      if (!block.memory
               ->CopyToHost(HostBuffer(state, block, b, i), buffers_[b][i], BlockBytes(block))
               .ok()) {
        return;
      }
    }
  }
  state.EncodeInto(out, sealed);
}

absl::Status DeviceArenaOptimizer::LoadState(absl::string_view bytes) {
  OptimizerState state(options_.kind, arena_, buffers_per_block_);
  if (absl::Status decoded = state.Decode(bytes); !decoded.ok()) return decoded;
  for (size_t b = 0; b < arena_.blocks().size(); ++b) {
    const ArenaBlock& block = arena_.blocks()[b];
    for (size_t i = 0; i < buffers_per_block_; ++i) {
      if (absl::Status copied = block.memory->CopyFromHost(
              buffers_[b][i], HostBuffer(state, block, b, i), BlockBytes(block));
          !copied.ok()) {
        return copied;
      }
    }
  }
  steps_ = state.steps();
  return absl::OkStatus();
}

}  // namespace cohort
