// DeviceArenaOptimizer: a built-in optimizer over an arena whose blocks live in device memory.
// Its state buffers are allocated in each block's memory, its steps run through
// DeviceUpdateKernels, and its saved state is OptimizerState's format, the same bytes a CPU
// optimizer writes for the same values: a checkpoint moves between CPU and GPU trials.
// Built through Optimizer::Create with kernels, for an arena with no block on the CPU.
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
      const OptimizerOptions& options, TensorArena& arena, DeviceUpdateKernels& kernels);
  ~DeviceArenaOptimizer() override;

  absl::Status Step() override;
  uint64_t steps_taken() const override { return steps_; }
  const OptimizerOptions& options() const override { return options_; }
  // Copies the buffers to the host (after the pending steps) and encodes them; "" when a copy
  // fails, which LoadState refuses.
  std::string SaveState() const override;
  void SaveStateInto(std::string& out, bool sealed) const override;
  // As Optimizer::LoadState; a copy to the device that fails midway (a device error) leaves the
  // state unspecified.
  absl::Status LoadState(absl::string_view bytes) override;

 private:
  DeviceArenaOptimizer(const OptimizerOptions& options, TensorArena& arena,
                       DeviceUpdateKernels& kernels, size_t buffers_per_block);

  OptimizerOptions options_;
  TensorArena& arena_;
  DeviceUpdateKernels& kernels_;
  size_t buffers_per_block_;
  uint64_t steps_ = 0;
  // Per block, its buffers in the block's memory (the first buffers_per_block_ are set).
  std::vector<std::array<void*, 2>> buffers_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_DEVICE_ARENA_OPTIMIZER_H_
