// AdamOptimizer: Adam (torch.optim.Adam: weight decay as L2 added to the gradient) and AdamW
// (torch.optim.AdamW: weight decay decoupled, applied to the parameter first), by options.kind.
// With t the steps taken counting this one:
//
//   AdamW only:  p -= lr*wd*p           (computed as p *= 1 - lr*wd)
//   Adam only:   g = grad + wd*p          (AdamW: g = grad)
//   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g
//   p -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps)
//
// The last line is evaluated as PyTorch does, p -= (lr/(1-b1^t)) * (m / (sqrt(v)/sqrt(1-b2^t) +
// eps)), with the per-step scalars computed in double and the rest in the block's precision. State:
// two buffers per block, m (exp_avg) then v (exp_avg_sq). Built through Optimizer::Create, which
// validates the options and the arena.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_OPTIM_ADAM_OPTIMIZER_H_
#define COHORT_RUNTIME_OPTIM_ADAM_OPTIMIZER_H_

#include "runtime/optim/arena_optimizer.h"

namespace cohort {

// The update rule over one block, in T's precision (what AdamOptimizer::Update runs; a device
// optimizer's kernels repeat it operation for operation).
template <class T>
void ApplyAdamRule(const BlockStep<T>& block, const OptimizerOptions& options);

class AdamOptimizer final : public ArenaOptimizer {
 public:
  // `options` must be valid, of kind kAdam or kAdamW; `arena` as for ArenaOptimizer.
  // A sharded one (ZeRO) keeps state for, and updates, its shard of each block only.
  AdamOptimizer(const OptimizerOptions& options, TensorArena& arena, ArenaShard shard = {});

 private:
  void Update(const BlockStep<float>& block) override;
  void Update(const BlockStep<double>& block) override;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_ADAM_OPTIMIZER_H_
