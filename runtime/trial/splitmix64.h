// SplitMix64: a tiny, fully specified 64-bit generator (Steele, Lea and Flood, 2014). The runtime's
// seeded choices (shuffles, trial seeds) use it so they are identical on every platform and
// standard library.
#ifndef COHORT_RUNTIME_TRIAL_SPLITMIX64_H_
#define COHORT_RUNTIME_TRIAL_SPLITMIX64_H_

#include <cstdint>

namespace cohort {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), bound >= 1, without modulo bias (rejects the short top range).
  uint64_t Below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    for (;;) {
      const uint64_t r = Next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  uint64_t state_;
};

// One well-mixed value from two (e.g. a seed and an epoch).
inline uint64_t MixSeeds(uint64_t a, uint64_t b) {
  SplitMix64 mix(a ^ (b * 0xD1B54A32D192ED03ULL));
  mix.Next();
  return mix.Next();
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_SPLITMIX64_H_
