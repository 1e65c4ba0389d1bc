#include "runtime/optim/sgd_optimizer.h"

namespace cohort {

// The rule in T's precision; the loop-invariant branches leave a loop the compiler vectorises.
template <class T>
void ApplySgdRule(const BlockStep<T>& block, const OptimizerOptions& options) {
  const T lr = static_cast<T>(options.learning_rate);
  const T weight_decay = static_cast<T>(options.weight_decay);
  const bool decay = options.weight_decay != 0;
  T* params = block.params;
  const T* grads = block.grads;

  if (options.momentum == 0) {
    for (uint64_t i = 0; i < block.count; ++i) {
      T g = grads[i];
      if (decay) g += weight_decay * params[i];
      params[i] -= lr * g;
    }
    return;
  }

  const T momentum = static_cast<T>(options.momentum);
  const bool first = block.step == 1;
  const bool nesterov = options.nesterov;
  T* velocity = block.buffers[0];
  for (uint64_t i = 0; i < block.count; ++i) {
    T g = grads[i];
    if (decay) g += weight_decay * params[i];
    const T buf = first ? g : momentum * velocity[i] + g;
    velocity[i] = buf;
    params[i] -= lr * (nesterov ? g + momentum * buf : buf);
  }
}

template void ApplySgdRule<float>(const BlockStep<float>&, const OptimizerOptions&);
template void ApplySgdRule<double>(const BlockStep<double>&, const OptimizerOptions&);

SgdOptimizer::SgdOptimizer(const OptimizerOptions& options, TensorArena& arena, ArenaShard shard)
    : ArenaOptimizer(options, arena, options.momentum > 0 ? 1 : 0, shard) {}

void SgdOptimizer::Update(const BlockStep<float>& block) { ApplySgdRule(block, options()); }
void SgdOptimizer::Update(const BlockStep<double>& block) { ApplySgdRule(block, options()); }

}  // namespace cohort
