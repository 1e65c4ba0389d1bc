// ArenaOptimizer: the part every built-in optimizer shares — the arena, the options, the state
// and its serialisation, and a Step that walks the blocks in order and hands each one, typed by
// its dtype, to the optimizer's update rule.
//
//   class MyOptimizer final : public ArenaOptimizer {
//     void Update(const BlockStep<float>& block) override { ... }
//     void Update(const BlockStep<double>& block) override { ... }
//   };
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_OPTIM_ARENA_OPTIMIZER_H_
#define COHORT_RUNTIME_OPTIM_ARENA_OPTIMIZER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/optim/optimizer.h"
#include "runtime/optim/optimizer_state.h"

namespace cohort {

// The most state buffers any built-in optimizer keeps per block.
inline constexpr size_t kMaxBuffersPerBlock = 2;

// One block during one step: its parameters, its (final) gradients and the optimizer's buffers
// for it, all `count` elements long with the same layout.
template <class T>
struct BlockStep {
  T* params;
  const T* grads;
  std::array<T*, kMaxBuffersPerBlock> buffers;  // the first buffers_per_block are set
  uint64_t count;
  uint64_t step;  // 1 on the first step
};

class ArenaOptimizer : public Optimizer {
 public:
  // Counts the step, then calls Update once per arena block, in block order.
  absl::Status Step() final;
  uint64_t steps_taken() const final { return state_.steps(); }
  const OptimizerOptions& options() const final { return options_; }
  std::string SaveState() const final { return state_.Encode(); }
  // Host memory: nothing to stage.
  void SaveStateInto(std::string& out, bool sealed, StagedHostCopies* /*staged*/) const final {
    state_.EncodeInto(out, sealed);
  }
  absl::Status LoadState(absl::string_view bytes) final { return state_.Decode(bytes); }
  ArenaShard shard() const final { return state_.shard(); }
  uint64_t state_bytes() const final { return state_.held_bytes(); }
  absl::Status SaveWholeStateInto(const OptimizerState::PieceMover& move, std::string* out,
                                  bool sealed) const final;
  // Host memory: nothing to stage.
  absl::Status LayOutWholeStateInto(std::string& whole, StagedHostCopies* staged) const final;
  absl::Status ReceiveWholeStateInto(const OptimizerState::PieceMover& move, std::string& whole,
                                     bool sealed) const final;
  absl::Status CopyShardStateInto(std::optional<OptimizerState>& copy,
                                  StagedHostCopies* staged) const final;

 protected:
  // The arena's blocks must all be float32 or float64 on the CPU (Optimizer::Create checks).
  ArenaOptimizer(const OptimizerOptions& options, TensorArena& arena, size_t buffers_per_block,
                 ArenaShard shard);

  // Applies the update rule to one block.
  virtual void Update(const BlockStep<float>& block) = 0;
  virtual void Update(const BlockStep<double>& block) = 0;

 private:
  template <class T>
  BlockStep<T> View(size_t block, uint64_t step);

  OptimizerOptions options_;
  TensorArena& arena_;
  size_t buffers_per_block_;
  OptimizerState state_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_ARENA_OPTIMIZER_H_
