// counter_rng.h -- a tiny counter-based random number generator (SplitMix64).
//
// Every random value of the MLP example is a pure function of (key, counter), so a value can be
// recomputed from its position alone, in any order, on any machine: no generator state, no
// std::*_distribution (whose output differs between standard libraries).
//
//   uint64_t key = rng::DeriveKey(trial_seed, layer);    // one stream per layer
//   float w = rng::UniformFloat(key, element, -a, a);    // element `element` of that stream
//
// Header-only, no state: safe from any thread.
#ifndef COHORT_PLUGINS_MLP_COUNTER_RNG_H_
#define COHORT_PLUGINS_MLP_COUNTER_RNG_H_

#include <cstdint>

namespace mlp::rng {

// The SplitMix64 finaliser: a bijection on 64-bit integers with good avalanche.
inline uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Draw number `counter` of the SplitMix64 sequence seeded with `key`.
inline uint64_t Bits(uint64_t key, uint64_t counter) {
  return Mix(key + (counter + 1) * 0x9e3779b97f4a7c15ULL);
}

// A key for the sub-stream `tag` of the stream `parent`.
inline uint64_t DeriveKey(uint64_t parent, uint64_t tag) { return Mix(parent ^ Mix(tag + 1)); }

// Uniform in [0, 1), from the top 53 bits.
inline double UnitDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Uniform in [low, high), draw `counter` of stream `key` (the float may round up to `high`).
inline double UniformDouble(uint64_t key, uint64_t counter, double low, double high) {
  return low + (high - low) * UnitDouble(Bits(key, counter));
}
inline float UniformFloat(uint64_t key, uint64_t counter, float low, float high) {
  return static_cast<float>(UniformDouble(key, counter, low, high));
}

}  // namespace mlp::rng

#endif  // COHORT_PLUGINS_MLP_COUNTER_RNG_H_
