#include "runtime/optim/optimizer.h"

#include "absl/strings/str_cat.h"
#include "runtime/arena/device_memory.h"
#include "runtime/arena/dtype.h"
#include "runtime/optim/adam_optimizer.h"
#include "runtime/optim/device_arena_optimizer.h"
#include "runtime/optim/sgd_optimizer.h"

namespace cohort {
namespace {

absl::Status CheckSupported(const TensorArena& arena, const OptimizerOptions& options,
                            bool device_kernels) {
  for (size_t b = 0; b < arena.blocks().size(); ++b) {
    const ArenaBlock& block = arena.blocks()[b];
    const bool place = device_kernels ? block.device.kind != COHORT_DEVICE_CPU
                                      : block.device.kind == COHORT_DEVICE_CPU;
    const bool dtype = block.dtype == COHORT_DTYPE_FLOAT32 || block.dtype == COHORT_DTYPE_FLOAT64;
    if (!place || !dtype) {
      return absl::UnimplementedError(absl::StrCat(
          "the built-in ", OptimizerKindName(options.kind), " optimizer cannot update arena block ",
          b, " (", DeviceName(block.device), ", ", DtypeName(block.dtype), "): it runs on ",
          device_kernels ? "device" : "cpu",
          " float32 and float64 blocks only, all on the device or all on the cpu; give the "
          "plugin an optimizer_step instead"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Optimizer::SaveWholeStateInto(const OptimizerState::PieceMover&, std::string*,
                                           bool) const {
  return absl::UnimplementedError("this optimizer is not sharded: SaveStateInto saves it whole");
}

absl::Status Optimizer::CopyShardStateInto(std::optional<OptimizerState>&,
                                           StagedHostCopies*) const {
  return absl::UnimplementedError("this optimizer is not sharded: SaveStateInto copies it whole");
}

absl::Status Optimizer::LayOutWholeStateInto(std::string&, StagedHostCopies*) const {
  return absl::UnimplementedError("this optimizer is not sharded: SaveStateInto saves it whole");
}

absl::Status Optimizer::ReceiveWholeStateInto(const OptimizerState::PieceMover&, std::string&,
                                              bool) const {
  return absl::UnimplementedError("this optimizer is not sharded: SaveStateInto saves it whole");
}

absl::StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const OptimizerOptions& options,
                                                             TensorArena& arena,
                                                             DeviceUpdateKernels* device_kernels,
                                                             ArenaShard shard) {
  if (absl::Status valid = ValidateOptimizerOptions(options); !valid.ok()) return valid;
  if (absl::Status supported = CheckSupported(arena, options, device_kernels != nullptr);
      !supported.ok()) {
    return supported;
  }
  if (device_kernels != nullptr) {
    absl::StatusOr<std::unique_ptr<DeviceArenaOptimizer>> device =
        DeviceArenaOptimizer::Create(options, arena, *device_kernels, shard);
    if (!device.ok()) return device.status();
    return std::unique_ptr<Optimizer>(*std::move(device));
  }
  if (options.kind == OptimizerOptions::Kind::kSgd)
    return std::make_unique<SgdOptimizer>(options, arena, shard);
  return std::make_unique<AdamOptimizer>(options, arena, shard);
}

}  // namespace cohort
