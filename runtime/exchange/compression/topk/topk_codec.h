// TopKCompressor: top-k gradient sparsification with error feedback (Deep Gradient Compression,
// Horovod's and GRACE's top-k): each step sends only the k largest-magnitude entries of the
// gradient plus what earlier steps left unsent, and keeps the rest as the residual for the next.
//
// k = max(1, ceil(ratio * count)), at most count. An entry's magnitude orders by |value| (NaN above
// infinity, so a NaN is always sent and shows in the result); among equal magnitudes the lower
// index wins. Pairs are written in ascending index order. For every entry, the value sent (or 0)
// plus the new residual equals grad + old residual (computed once in float32) exactly.
//
// Ranks exchange their (index, value) pairs with an allgather; each rank then rebuilds the summed
// gradient by zeroing it and calling Accumulate once per rank's pairs. As with every codec,
// averaging is done before compressing (see codec.h).
//
//   TopKCompressor topk(count, 0.01);
//   std::vector<uint32_t> indices(topk.k());
//   std::vector<float> values(topk.k());
//   topk.Compress(grad, indices.data(), values.data());
//   ...  // allgather the pairs
//   std::fill(grad, grad + count, 0.0f);
//   for each rank r: TopKCompressor::Accumulate(indices_r, values_r, topk.k(), grad);
//
// Thread-safety: Compress mutates the residual; use one compressor per bucket and thread.
// Accumulate is a pure function.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_CODEC_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_CODEC_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cohort {

// The number of entries sent from `count`: max(1, ceil(ratio * count)), at most count; 0 for an
// empty bucket.
uint64_t TopKCount(uint64_t count, double ratio);

class TopKCompressor {
 public:
  // Requires count <= 2^32 (indices are uint32) and ratio in (0, 1]; a ratio past either end is
  // clamped to k = 1 or k = count. The residual starts at zero.
  TopKCompressor(uint64_t count, double ratio);

  uint64_t count() const { return residual_.size(); }
  uint64_t k() const { return k_; }

  // Bytes of one rank's pairs: k indices and k values.
  uint64_t EncodedBytes() const { return k_ * (sizeof(uint32_t) + sizeof(float)); }

  // Selects the k largest |grad[i] + residual[i]| over grad[0, count) and writes their indices
  // (ascending) and values to indices[0, k) and values[0, k); every other entry's sum becomes its
  // residual, and the residual of the selected entries becomes 0.
  void Compress(const float* grad, uint32_t* indices, float* values);

  // What was left unsent, count entries.
  const std::vector<float>& residual() const { return residual_; }

  // Drops the residual (e.g. after the parameters were restored from a checkpoint).
  void ClearResidual();
  // Replaces the residual with values[0, count()) (a residual saved with a checkpoint).
  void SetResidual(const float* values) {
    std::copy(values, values + residual_.size(), residual_.begin());
  }

  // out[indices[j]] += values[j] for j in [0, k).
  static void Accumulate(const uint32_t* indices, const float* values, uint64_t k, float* out);

 private:
  uint64_t k_;
  std::vector<float> residual_;
  std::vector<uint32_t> magnitudes_;  // scratch for the selection
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_CODEC_H_
