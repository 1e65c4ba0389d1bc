// SgdOptimizer: stochastic gradient descent with optional momentum, Nesterov momentum and L2
// weight decay, as torch.optim.SGD (without dampening):
//
//   g = grad + wd*p
//   buf = g on the first step, else momentum*buf + g        (only when momentum > 0)
//   g = nesterov ? g + momentum*buf : buf                   (only when momentum > 0)
//   p -= lr*g
//
// State: one momentum buffer per block when momentum > 0, none otherwise. Built through
// Optimizer::Create, which validates the options and the arena.
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_OPTIM_SGD_OPTIMIZER_H_
#define COHORT_RUNTIME_OPTIM_SGD_OPTIMIZER_H_

#include "runtime/optim/arena_optimizer.h"

namespace cohort {

// The update rule over one block, in T's precision (what SgdOptimizer::Update runs; a device
// optimizer's kernels repeat it operation for operation).
template <class T>
void ApplySgdRule(const BlockStep<T>& block, const OptimizerOptions& options);

class SgdOptimizer final : public ArenaOptimizer {
 public:
  // `options` must be valid, of kind kSgd; `arena` as for ArenaOptimizer.
  // A sharded one (ZeRO) keeps state for, and updates, its shard of each block only.
  SgdOptimizer(const OptimizerOptions& options, TensorArena& arena, ArenaShard shard = {});

 private:
  void Update(const BlockStep<float>& block) override;
  void Update(const BlockStep<double>& block) override;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_SGD_OPTIMIZER_H_
