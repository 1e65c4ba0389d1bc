#include "runtime/exchange/compression/topk/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "runtime/exchange/compression/float_bits.h"

namespace cohort {

uint64_t TopKCount(uint64_t count, double ratio) {
  if (count == 0) return 0;
  const double wanted = std::ceil(ratio * static_cast<double>(count));
  if (!(wanted >= 1)) return 1;  // also NaN
  if (wanted >= static_cast<double>(count)) return count;
  return static_cast<uint64_t>(wanted);
}

TopKCompressor::TopKCompressor(uint64_t count, double ratio)
    : k_(TopKCount(count, ratio)), residual_(count, 0.0f), magnitudes_(count) {}

void TopKCompressor::ClearResidual() { std::fill(residual_.begin(), residual_.end(), 0.0f); }

void TopKCompressor::Compress(const float* grad, uint32_t* indices, float* values) {
  const uint64_t n = residual_.size();
  if (k_ == 0) return;
  float* sum = residual_.data();
  for (uint64_t i = 0; i < n; ++i) {
    sum[i] += grad[i];
    magnitudes_[i] = MagnitudeKey(sum[i]);
  }
  // The k-th largest magnitude; all larger ones are sent, and as many equal ones as fit, lowest
  // index first.
  std::nth_element(magnitudes_.begin(), magnitudes_.begin() + static_cast<std::ptrdiff_t>(k_ - 1),
                   magnitudes_.end(), std::greater<uint32_t>());
  const uint32_t threshold = magnitudes_[k_ - 1];
  uint64_t ties_to_send = k_;
  for (uint64_t i = 0; i < n; ++i) ties_to_send -= MagnitudeKey(sum[i]) > threshold ? 1 : 0;
  uint64_t sent = 0;
  for (uint64_t i = 0; i < n && sent < k_; ++i) {
    const uint32_t key = MagnitudeKey(sum[i]);
    if (key < threshold) continue;
    if (key == threshold) {
      if (ties_to_send == 0) continue;
      --ties_to_send;
    }
    indices[sent] = static_cast<uint32_t>(i);
    values[sent] = sum[i];
    sum[i] = 0.0f;
    ++sent;
  }
}

void TopKCompressor::Accumulate(const uint32_t* indices, const float* values, uint64_t k,
                                float* out) {
  for (uint64_t j = 0; j < k; ++j) out[indices[j]] += values[j];
}

}  // namespace cohort
