// Optimizer: a built-in optimizer that updates a TensorArena's parameters in place from its
// gradients, with PyTorch's update rules, for models whose plugin has no optimizer_step.
//
//   absl::StatusOr<OptimizerOptions> options = OptimizerOptionsFromHyperparameters(hp);  // config
//   absl::StatusOr<std::unique_ptr<Optimizer>> optimizer = Optimizer::Create(*options, arena);
//   // after each aggregation, with the arena's gradients final (already averaged):
//   absl::Status s = (*optimizer)->Step();
//   std::string state = (*optimizer)->SaveState();   // into a checkpoint
//   s = restored->LoadState(state);                   // continues bitwise identically
//
// Every parameter is updated in the precision of its block (float for float32, double for
// float64), in a fixed order: the same state and gradients give bitwise the same parameters.
// Zeros stay zero: where a parameter and its gradient are 0 (the arena's alignment gaps), every
// rule leaves the parameter and the optimizer's state at 0. The optimizer never touches gradients.
//
// Thread-safety: not thread-safe; Step needs exclusive use of the arena's parameters.
#ifndef COHORT_RUNTIME_OPTIM_OPTIMIZER_H_
#define COHORT_RUNTIME_OPTIM_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/arena/arena_shard.h"
#include "runtime/arena/staged_host_copies.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/optim/device_update_kernels.h"
#include "runtime/optim/optimizer_options.h"
#include "runtime/optim/optimizer_state.h"

namespace cohort {

class Optimizer {
 public:
  // Validates the options (INVALID_ARGUMENT, see ValidateOptimizerOptions) and that every arena
  // block has dtype float32 or float64 and is on the CPU, or, with `device_kernels`, every block
  // is in device memory (otherwise UNIMPLEMENTED naming the block's device and dtype), and
  // allocates the optimizer's state, zeroed, mirroring the blocks (in the blocks' memory). The
  // arena, and the kernels, must outlive the optimizer.
  //
  // With a `shard` of several ranks (ZeRO, arena_shard.h), the optimizer keeps state for, and
  // Step updates, the shard's range of each block only; the caller brings the other ranges'
  // parameters from their owners after each step; on the CPU, and with `device_kernels` in device
  // memory alike (each rank's device buffers hold its ranges).
  static absl::StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerOptions& options, TensorArena& arena,
      DeviceUpdateKernels* device_kernels = nullptr, ArenaShard shard = {});
  virtual ~Optimizer() = default;

  // One update of every parameter from its gradient, PyTorch's semantics:
  //   SGD:   g = grad + wd*p; buf = g on the first step, else momentum*buf + g;
  //          g = nesterov ? g + momentum*buf : buf (when momentum > 0); p -= lr*g
  //   Adam:  g = grad + wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
  //          p -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps)      (t = steps taken, from 1)
  //   AdamW: p -= lr*wd*p first, then Adam with wd = 0.
  virtual absl::Status Step() = 0;
  virtual uint64_t steps_taken() const = 0;
  virtual const OptimizerOptions& options() const = 0;

  // Serialises the optimizer's full state (kind, step count, every state buffer) so that
  // LoadState on a fresh optimizer over an arena of the same layout continues bitwise identically.
  // The options (learning rate, ...) are not part of the state: they come from the trial.
  virtual std::string SaveState() const = 0;
  // SaveState into `out`, reusing its memory (a checkpoint's buffers taken again). With `sealed`
  // false the trailing checksum is left off, for SealOptimizerState (optimizer_state.h) to add
  // away from the training thread; sealed, the bytes are SaveState's. With `staged`, copies out of
  // device memory go through it: their bytes reach `out` at its Land, and until then `out` must
  // not change (and is not sealed: `sealed` must be false).
  virtual void SaveStateInto(std::string& out, bool sealed, StagedHostCopies* staged) const = 0;
  // Replaces the state with one from SaveState. INVALID_ARGUMENT (never a crash) on truncated or
  // corrupt bytes, a different kind, or a layout that does not match this arena (block count,
  // dtype, element counts), naming what differs; on error the state is unchanged.
  // A sharded optimizer keeps its shard's range of the state it reads.
  virtual absl::Status LoadState(absl::string_view bytes) = 0;

  // ZeRO. The part of the arena this optimizer steps (whole by default). A sharded optimizer has no
  // whole state of its own (SaveState is empty): every rank of the shard calls SaveWholeStateInto
  // at the same point with a mover that gathers onto rank 0 (OptimizerState::GatherWholeInto), and
  // the rank that passes `out` gets SaveState's bytes of the whole state there, which LoadState
  // reads on any shard. UNIMPLEMENTED for an optimizer that is not sharded.
  virtual ArenaShard shard() const { return {}; }
  // Bytes of state this optimizer keeps (its shard's, when sharded); 0 where it does not say.
  virtual uint64_t state_bytes() const { return 0; }
  virtual absl::Status SaveWholeStateInto(const OptimizerState::PieceMover& move, std::string* out,
                                          bool sealed) const;
  // ZeRO, for a checkpoint gathered off the training thread, all UNIMPLEMENTED for an optimizer
  // that is not sharded. On the shard's rank 0: LayOutWholeStateInto writes SaveState's bytes of
  // the whole state into `whole` with this rank's pieces in place
  // (OptimizerState::LayOutWholeInto), at the step boundary; ReceiveWholeStateInto then moves the
  // other ranks' pieces there, and may run on another thread while Step runs. On every other rank:
  // CopyShardStateInto copies its shard of the state into `copy` (memory reused when it already
  // holds this shard's), whose SendPieces then moves the pieces while the optimizer steps on.
  // With `staged`, this rank's pieces in device memory reach `whole` (or `copy`) at its Land, which
  // must come before ReceiveWholeStateInto (or SendPieces).
  virtual absl::Status LayOutWholeStateInto(std::string& whole, StagedHostCopies* staged) const;
  virtual absl::Status ReceiveWholeStateInto(const OptimizerState::PieceMover& move,
                                             std::string& whole, bool sealed) const;
  virtual absl::Status CopyShardStateInto(std::optional<OptimizerState>& copy,
                                          StagedHostCopies* staged) const;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_OPTIMIZER_H_
