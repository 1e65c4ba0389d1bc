// HyperparameterSampler: random hyperparameter values, as Determined's random and adaptive_asha
// searchers draw them, from a seeded generator that gives the same values on every platform.
//
//   HyperparameterSampler sampler(/*seed=*/7);
//   Hyperparameters first = sampler.Sample(config.hyperparameter_spaces);
//   Hyperparameters second = sampler.Sample(config.hyperparameter_spaces);  // the next draw
//
// Per space, in name order: const gives its value (drawing nothing); int a uniform integer in
// [minval, maxval] (both ends included); double a uniform number between minval and maxval; log
// base^x for x uniform between minval and maxval; categorical one of its values, each equally
// likely.
// The generator is std::mt19937_64 (fixed by the C++ standard), and the draws are mapped to
// ranges here rather than by the standard distributions, whose output varies by library.
//
// Thread-safety: not thread-safe (Sample advances the generator).
#ifndef COHORT_RUNTIME_SEARCH_HYPERPARAMETER_SAMPLER_H_
#define COHORT_RUNTIME_SEARCH_HYPERPARAMETER_SAMPLER_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "runtime/config/experiment_config.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

class HyperparameterSampler {
 public:
  explicit HyperparameterSampler(uint64_t seed) : engine_(seed) {}

  // One value for every space.
  Hyperparameters Sample(const std::map<std::string, HyperparameterSpace>& spaces);

 private:
  // Uniform in [0, n), n >= 1, without modulo bias.
  uint64_t Below(uint64_t n);
  // Uniform in [0, 1), on a grid of 2^-53.
  double Unit();
  Hyperparameters::Value Draw(const HyperparameterSpace& space);

  std::mt19937_64 engine_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SEARCH_HYPERPARAMETER_SAMPLER_H_
