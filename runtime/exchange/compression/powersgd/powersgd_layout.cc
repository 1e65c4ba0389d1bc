#include "runtime/exchange/compression/powersgd/powersgd_layout.h"

#include <algorithm>

namespace cohort {
namespace {

uint64_t SplitMix64Next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

PowerSgdLayout LayOutPowerSgd(const std::vector<PowerSgdTensor>& tensors, uint32_t rank) {
  const uint64_t wanted_rank = std::max<uint32_t>(rank, 1);
  PowerSgdLayout layout;
  uint64_t p_count = 0;
  for (uint64_t index = 0; index < tensors.size(); ++index) {
    const PowerSgdTensor& tensor = tensors[index];
    const uint64_t effective_rank = std::min({wanted_rank, tensor.rows, tensor.cols});
    const uint64_t count = tensor.rows * tensor.cols;
    if (tensor.rows > 1 && tensor.cols > 1 &&
        effective_rank * (tensor.rows + tensor.cols) < count) {
      layout.matrices.push_back({tensor.offset, tensor.rows, tensor.cols,
                                 static_cast<uint32_t>(effective_rank), index, p_count,
                                 layout.second_count, layout.error_count});
      p_count += effective_rank * tensor.rows;
      layout.second_count += effective_rank * tensor.cols;
      layout.error_count += count;
      layout.widest = std::max(layout.widest, tensor.cols);
    } else {
      layout.plain.push_back({tensor.offset, count, 0});
    }
  }
  layout.first_count = p_count;
  for (PowerSgdPlain& plain : layout.plain) {
    plain.first_offset = layout.first_count;
    layout.first_count += plain.count;
  }
  return layout;
}

void DrawStartingQColumn(uint64_t seed, uint64_t index, uint32_t column, uint64_t cols,
                         float* out) {
  uint64_t state = seed;
  state = SplitMix64Next(state) ^ index;
  state = SplitMix64Next(state) ^ column;
  state = SplitMix64Next(state);
  for (uint64_t k = 0; k < cols; ++k) {
    out[k] = static_cast<float>(SplitMix64Next(state) >> 40) * 0x1p-23f - 1.0f;
  }
}

}  // namespace cohort
