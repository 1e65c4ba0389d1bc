// PowerSgdCompressor: low-rank gradient compression with error feedback and warm start (Vogels,
// Karimireddy and Jaggi 2019, "PowerSGD"; PyTorch's powerSGD_hook).
//
// Each matrix-shaped tensor M (rows x cols) of a bucket travels as two thin factors instead of
// its rows * cols values: P = M Q (rows x r) is summed over the ranks and orthonormalized, then
// Q = M^T P (cols x r) is summed, and every rank rebuilds the approximation A = P Q^T. That is one
// step of power iteration per training step; the summed Q is the next step's starting point (warm
// start), so the approximation of a slowly changing gradient keeps improving. What the
// approximation of a rank's own M misses is kept as that rank's error and added to its next
// gradient (error feedback): compression delays part of the gradient, it loses none of it.
// Tensors that would not shrink travel uncompressed, summed like plain float32.
//
// The compressor does not communicate: the exchange runs three steps around two allreduce-sum
// collectives. As with every codec (codec.h), each rank divides its gradient by the number of
// ranks before compressing; the products are linear in M, so the sum over ranks of P_i = M_i Q is
// (sum M_i) Q and the result approximates the average gradient (plus the average error).
//
//   PowerSgdCompressor powersgd(tensors, /*rank=*/4, /*seed=*/42);
//   std::vector<float> first(powersgd.first_count()), second(powersgd.second_count());
//   powersgd.ComputeP(grad, first.data());
//   ...  // allreduce-sum `first` over the ranks
//   powersgd.ComputeQ(grad, first.data(), second.data());
//   ...  // allreduce-sum `second` over the ranks
//   powersgd.Decompress(first.data(), second.data(), grad);
//
// Layouts, identical on every rank built from the same tensors: `first` holds every compressed
// tensor's P, in tensor order, column by column (r columns of `rows` floats), then every
// uncompressed tensor's rows * cols values in tensor order; `second` holds every compressed
// tensor's Q column by column (r columns of `cols` floats).
//
// Numerics: products with M accumulate in float32 (dot products in eight lanes combined
// pairwise), Gram-Schmidt in double, all in a fixed order, so the same inputs give bitwise
// identical outputs. The starting Q of tensor t, column c holds uniform values in [-1, 1) (steps
// of 2^-23) from a SplitMix64 stream keyed by (seed, t, c), t counting every tensor given to the
// constructor. Q is orthonormalized before each use, as PyTorch does. Orthonormalization is
// modified Gram-Schmidt without epsilon: a column left exactly zero after removing the earlier
// columns stays zero in P (that direction contributes nothing), and is redrawn from its stream in
// Q, so a step with a zero gradient does not stall the later ones.
//
// Error feedback follows the paper: rank i's error is M_i - P Q_i^T, with Q_i = M_i^T P its own
// Q before the sum. The ranks' shares P Q_i^T add up to A, so the ranks' errors add up to what A
// misses of the summed M (up to rounding), and everything stays an average. With one rank the
// error is M - A.
//
// Thread-safety: the steps mutate the compressor's state; use one compressor per bucket and
// thread.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_CODEC_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_CODEC_H_

#include <cstdint>
#include <vector>

#include "runtime/exchange/compression/powersgd/powersgd_layout.h"

namespace cohort {

class PowerSgdCompressor {
 public:
  // `tensors` are the bucket's tensors, not overlapping; `rank` >= 1 (0 is taken as 1); `seed`
  // seeds the starting Q (every rank passes the same seed, so every rank starts from the same Q).
  // A tensor is compressed when rows > 1, cols > 1 and r * (rows + cols) < rows * cols with
  // r = min(rank, rows, cols) its effective rank (compression must save floats). Others go
  // uncompressed. The error starts at zero.
  PowerSgdCompressor(std::vector<PowerSgdTensor> tensors, uint32_t rank, uint64_t seed);

  // Floats in the first allreduce: every P, then every uncompressed tensor's values.
  uint64_t first_count() const { return layout_.first_count; }
  // Floats in the second allreduce: every Q.
  uint64_t second_count() const { return layout_.second_count; }
  uint64_t compressed_tensors() const { return layout_.matrices.size(); }

  // Step 1. `grad` is the bucket, already divided by the number of ranks. For each compressed
  // tensor, M = grad + error is written back into grad (the caller's gradient becomes M) and
  // P = M Q into `first`; every uncompressed tensor's values are copied after the Ps.
  // Writes first[0, first_count()).
  void ComputeP(float* grad, float* first);

  // Step 2, after `first` was summed over the ranks: orthonormalizes each P's columns in place,
  // then writes this rank's Q = M^T P to second[0, second_count()). `grad` holds M from step 1.
  void ComputeQ(const float* grad, float* first, float* second);

  // Step 3, after `second` was summed over the ranks (`first` as step 2 left it): for each
  // compressed tensor grad = A = P Q^T and error = M - P Q_i^T (see above); every uncompressed
  // tensor's summed values are copied from `first` into grad. Elements of the bucket covered by
  // no tensor are left alone. The summed Q is kept as the next step's starting Q.
  void Decompress(const float* first, const float* second, float* grad);

  // Forgets the error and restarts Q from the seed (e.g. after parameters were restored).
  void Reset();

  // Every compressed tensor's error, rows * cols values row-major each, in tensor order.
  const std::vector<float>& error() const { return error_; }
  // Every compressed tensor's starting Q for the next step, cols * rank values each.
  const std::vector<float>& q() const { return q_; }
  // Replaces Q and the error with q[0, q().size()) and error[0, error().size()) (as saved with a
  // checkpoint).
  void SetState(const float* q, const float* error);

 private:
  // Fills column `column` of `matrix`'s Q in q_ from its stream.
  void DrawQColumn(const PowerSgdMatrix& matrix, uint32_t column);

  uint64_t seed_;
  PowerSgdLayout layout_;
  std::vector<float> q_;      // the starting Q of the next ComputeP
  std::vector<float> own_q_;  // this rank's Q of the current step, before the sum
  std::vector<float> error_;
  std::vector<float> approximation_row_;  // scratch, one row of the widest matrix
  std::vector<float> own_share_row_;      // scratch, likewise
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_CODEC_H_
