// DeviceArenaOptimizer: a built-in optimizer over an arena whose blocks live in device memory.
// Its state buffers are allocated in each block's memory, its steps run through
// DeviceUpdateKernels, and its saved state is OptimizerState's format, the same bytes a CPU
// optimizer writes for the same values: a checkpoint moves between CPU and GPU trials.
// Built through Optimizer::Create with kernels, for an arena with no block on the CPU. Sharded
// (ZeRO, arena_shard.h), it keeps buffers of ShardChunk elements per block on the device and steps
// its shard's range of each block only; the whole state is assembled through host copies of the
// pieces (OptimizerState::GatherWholeInto), and a whole state loads into any shard.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_OPTIM_DEVICE_ARENA_OPTIMIZER_H_
#define COHORT_RUNTIME_OPTIM_DEVICE_ARENA_OPTIMIZER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/optim/device_update_kernels.h"
#include "runtime/optim/optimizer.h"

namespace cohort {

class DeviceArenaOptimizer final : public Optimizer {
 public:
  // `options` valid; every block of `arena` in device memory, float32 or float64. The arena and
  // the kernels must outlive the optimizer.
  static absl::StatusOr<std::unique_ptr<DeviceArenaOptimizer>> Create(
      const OptimizerOptions& options, TensorArena& arena, DeviceUpdateKernels& kernels,
      ArenaShard shard = {});
  ~DeviceArenaOptimizer() override;

  absl::Status Step() override;
  uint64_t steps_taken() const override { return steps_; }
  const OptimizerOptions& options() const override { return options_; }
  // Copies each buffer from the device (after the pending steps) straight into its place in the
  // encoded bytes (or toward it, through page-locked memory, with `staged`), whose memory
  // SaveStateInto reuses; "" when a copy fails, which LoadState refuses, and for a sharded
  // optimizer (SaveWholeStateInto).
  std::string SaveState() const override;
  void SaveStateInto(std::string& out, bool sealed, StagedHostCopies* staged) const override;
  // As Optimizer::LoadState; a copy to the device that fails midway (a device error) leaves the
  // state unspecified.
  absl::Status LoadState(absl::string_view bytes) override;
  ArenaShard shard() const override { return shard_; }
  uint64_t state_bytes() const override;
  // As Optimizer's: this rank's pieces, copied to the host, go into OptimizerState's gather.
  absl::Status SaveWholeStateInto(const OptimizerState::PieceMover& move, std::string* out,
                                  bool sealed) const override;
  absl::Status LayOutWholeStateInto(std::string& whole, StagedHostCopies* staged) const override;
  absl::Status ReceiveWholeStateInto(const OptimizerState::PieceMover& move, std::string& whole,
                                     bool sealed) const override;
  absl::Status CopyShardStateInto(std::optional<OptimizerState>& copy,
                                  StagedHostCopies* staged) const override;

 private:
  DeviceArenaOptimizer(const OptimizerOptions& options, TensorArena& arena,
                       DeviceUpdateKernels& kernels, size_t buffers_per_block, ArenaShard shard);

  // Elements of each of block `b`'s buffers: the block's, or a shard's chunk of it.
  uint64_t BufferElements(size_t b) const;
  // The buffers copied into a host state of this shard (steps included), made in `state` unless it
  // already holds one; through `staged` when given.
  absl::Status HostStateInto(std::optional<OptimizerState>& state, StagedHostCopies* staged) const;

  OptimizerOptions options_;
  TensorArena& arena_;
  DeviceUpdateKernels& kernels_;
  size_t buffers_per_block_;
  ArenaShard shard_;
  uint64_t steps_ = 0;
  // Per block, its buffers in the block's memory (the first buffers_per_block_ are set).
  std::vector<std::array<void*, 2>> buffers_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_DEVICE_ARENA_OPTIMIZER_H_
