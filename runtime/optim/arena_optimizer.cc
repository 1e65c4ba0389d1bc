#include "runtime/optim/arena_optimizer.h"

namespace cohort {

ArenaOptimizer::ArenaOptimizer(const OptimizerOptions& options, TensorArena& arena,
                               size_t buffers_per_block, ArenaShard shard)
    : options_(options),
      arena_(arena),
      buffers_per_block_(buffers_per_block),
      state_(options.kind, arena, buffers_per_block, shard) {}

template <class T>
BlockStep<T> ArenaOptimizer::View(size_t block, uint64_t step) {
  const ArenaBlock& b = arena_.blocks()[block];
  const ElementRange range = state_.range(block);
  BlockStep<T> view{static_cast<T*>(b.data) + range.begin,
                    static_cast<const T*>(b.grad) + range.begin,
                    {},
                    range.count(),
                    step};
  for (size_t i = 0; i < buffers_per_block_; ++i) view.buffers[i] = state_.buffer<T>(block, i);
  return view;
}

absl::Status ArenaOptimizer::SaveWholeStateInto(const OptimizerState::PieceMover& move,
                                                std::string* out, bool sealed) const {
  if (state_.shard().whole()) return Optimizer::SaveWholeStateInto(move, out, sealed);
  return state_.GatherWholeInto(move, out, sealed);
}

absl::Status ArenaOptimizer::LayOutWholeStateInto(std::string& whole,
                                                  StagedHostCopies* staged) const {
  if (state_.shard().whole()) return Optimizer::LayOutWholeStateInto(whole, staged);
  return state_.LayOutWholeInto(whole);
}

absl::Status ArenaOptimizer::ReceiveWholeStateInto(const OptimizerState::PieceMover& move,
                                                   std::string& whole, bool sealed) const {
  if (state_.shard().whole()) return Optimizer::ReceiveWholeStateInto(move, whole, sealed);
  // The layout only: Step may change the buffers meanwhile.
  return OptimizerState::ReceivePiecesInto(arena_, buffers_per_block_, state_.shard(), move, whole,
                                           sealed);
}

absl::Status ArenaOptimizer::CopyShardStateInto(std::optional<OptimizerState>& copy,
                                                StagedHostCopies* staged) const {
  if (state_.shard().whole()) return Optimizer::CopyShardStateInto(copy, staged);
  if (copy) {
    *copy = state_;  // the buffers' memory is kept
  } else {
    copy.emplace(state_);
  }
  return absl::OkStatus();
}

absl::Status ArenaOptimizer::Step() {
  state_.CountStep();
  const uint64_t step = state_.steps();
  for (size_t block = 0; block < arena_.blocks().size(); ++block) {
    if (arena_.blocks()[block].dtype == COHORT_DTYPE_FLOAT64) {
      Update(View<double>(block, step));
    } else {
      Update(View<float>(block, step));
    }
  }
  return absl::OkStatus();
}

}  // namespace cohort
