#include "runtime/optim/adam_optimizer.h"

#include <cmath>

namespace cohort {

// The rule in T's precision; the loop-invariant branches leave a loop the compiler vectorises.
template <class T>
void ApplyAdamRule(const BlockStep<T>& block, const OptimizerOptions& options) {
  const double t = static_cast<double>(block.step);
  const double lr = options.learning_rate, wd = options.weight_decay;
  const bool decoupled = options.kind == OptimizerOptions::Kind::kAdamW;
  const bool shrink = decoupled && wd != 0;
  const bool l2 = !decoupled && wd != 0;
  const T shrink_factor = static_cast<T>(1 - lr * wd);
  const T l2_factor = static_cast<T>(wd);
  const T beta1 = static_cast<T>(options.beta1),
          one_minus_beta1 = static_cast<T>(1 - options.beta1);
  const T beta2 = static_cast<T>(options.beta2),
          one_minus_beta2 = static_cast<T>(1 - options.beta2);
  const T step_size = static_cast<T>(lr / (1 - std::pow(options.beta1, t)));
  const T bias_correction2_sqrt = static_cast<T>(std::sqrt(1 - std::pow(options.beta2, t)));
  const T eps = static_cast<T>(options.eps);

  T* params = block.params;
  const T* grads = block.grads;
  T* exp_avg = block.buffers[0];
  T* exp_avg_sq = block.buffers[1];
  for (uint64_t i = 0; i < block.count; ++i) {
    T p = params[i];
    if (shrink) p *= shrink_factor;
    T g = grads[i];
    if (l2) g += l2_factor * p;
    const T m = beta1 * exp_avg[i] + one_minus_beta1 * g;
    const T v = beta2 * exp_avg_sq[i] + one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    params[i] = p - step_size * (m / (std::sqrt(v) / bias_correction2_sqrt + eps));
  }
}

template void ApplyAdamRule<float>(const BlockStep<float>&, const OptimizerOptions&);
template void ApplyAdamRule<double>(const BlockStep<double>&, const OptimizerOptions&);

AdamOptimizer::AdamOptimizer(const OptimizerOptions& options, TensorArena& arena, ArenaShard shard)
    : ArenaOptimizer(options, arena, 2, shard) {}

void AdamOptimizer::Update(const BlockStep<float>& block) { ApplyAdamRule(block, options()); }
void AdamOptimizer::Update(const BlockStep<double>& block) { ApplyAdamRule(block, options()); }

}  // namespace cohort
