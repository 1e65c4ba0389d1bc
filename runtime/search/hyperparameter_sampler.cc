#include "runtime/search/hyperparameter_sampler.h"

#include <cmath>

namespace cohort {

Hyperparameters HyperparameterSampler::Sample(
    const std::map<std::string, HyperparameterSpace>& spaces) {
  Hyperparameters sample;
  for (const auto& [name, space] : spaces) sample.Set(name, Draw(space));
  return sample;
}

uint64_t HyperparameterSampler::Below(uint64_t n) {
  // Draws below 2^64 mod n are rejected, so the accepted ones cover each residue equally often.
  const uint64_t rejected = (0 - n) % n;
  while (true) {
    const uint64_t draw = engine_();
    if (draw >= rejected) return draw % n;
  }
}

double HyperparameterSampler::Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

Hyperparameters::Value HyperparameterSampler::Draw(const HyperparameterSpace& space) {
  using Kind = HyperparameterSpace::Kind;
  switch (space.kind) {
    case Kind::kConst:
      return space.value;
    case Kind::kInt: {
      // Integer bounds within 2^53 (the config reader checks), so the span fits easily.
      const auto lo = static_cast<int64_t>(space.minval);
      const auto span = static_cast<uint64_t>(static_cast<int64_t>(space.maxval) - lo);
      return lo + static_cast<int64_t>(Below(span + 1));
    }
    case Kind::kDouble:
      return space.minval + Unit() * (space.maxval - space.minval);
    case Kind::kLog:
      return std::pow(space.base, space.minval + Unit() * (space.maxval - space.minval));
    case Kind::kCategorical:
      if (!space.vals.empty()) return space.vals[Below(space.vals.size())];
      break;
  }
  return Hyperparameters::Other{"null"};
}

}  // namespace cohort
