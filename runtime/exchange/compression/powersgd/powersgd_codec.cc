#include "runtime/exchange/compression/powersgd/powersgd_codec.h"

#include <algorithm>
#include <cmath>

namespace cohort {
namespace {

// a . b over n floats, summed in eight independent lanes (which the compiler may vectorise
// without reordering any lane's sum), then the lanes pairwise, then the tail.
float Dot(const float* a, const float* b, uint64_t n) {
  constexpr uint64_t kLanes = 8;
  float lanes[kLanes] = {};
  uint64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (uint64_t lane = 0; lane < kLanes; ++lane) lanes[lane] += a[k + lane] * b[k + lane];
  }
  float tail = 0.0f;
  for (; k < n; ++k) tail += a[k] * b[k];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])) + tail;
}

double DotDouble(const float* a, const float* b, uint64_t n) {
  double sum = 0.0;
  for (uint64_t k = 0; k < n; ++k) sum += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  return sum;
}

// Column `j` of `columns` (each `length` floats, contiguous), with columns [0, j) already
// orthonormal: removes their components one after the other (modified Gram-Schmidt), then
// scales it to unit norm. A column left exactly zero stays zero; returns false for it.
bool OrthonormalizeColumn(float* columns, uint64_t length, uint32_t j) {
  float* column = columns + j * length;
  for (uint32_t i = 0; i < j; ++i) {
    const float* earlier = columns + i * length;
    const double projection = DotDouble(earlier, column, length);
    for (uint64_t k = 0; k < length; ++k) {
      column[k] = static_cast<float>(static_cast<double>(column[k]) -
                                     projection * static_cast<double>(earlier[k]));
    }
  }
  const double norm = std::sqrt(DotDouble(column, column, length));
  if (norm == 0.0) return false;
  for (uint64_t k = 0; k < length; ++k) {
    column[k] = static_cast<float>(static_cast<double>(column[k]) / norm);
  }
  return true;
}

}  // namespace

PowerSgdCompressor::PowerSgdCompressor(std::vector<PowerSgdTensor> tensors, uint32_t rank,
                                       uint64_t seed)
    : seed_(seed), layout_(LayOutPowerSgd(tensors, rank)) {
  q_.resize(layout_.second_count);
  own_q_.resize(layout_.second_count);
  error_.resize(layout_.error_count);
  approximation_row_.resize(layout_.widest);
  own_share_row_.resize(layout_.widest);
  Reset();
}

void PowerSgdCompressor::Reset() {
  std::fill(error_.begin(), error_.end(), 0.0f);
  for (const PowerSgdMatrix& matrix : layout_.matrices) {
    for (uint32_t c = 0; c < matrix.rank; ++c) DrawQColumn(matrix, c);
  }
}

void PowerSgdCompressor::SetState(const float* q, const float* error) {
  std::copy(q, q + q_.size(), q_.begin());
  std::copy(error, error + error_.size(), error_.begin());
}

void PowerSgdCompressor::DrawQColumn(const PowerSgdMatrix& matrix, uint32_t column) {
  DrawStartingQColumn(seed_, matrix.index, column, matrix.cols,
                      q_.data() + matrix.q_offset + column * matrix.cols);
}

void PowerSgdCompressor::ComputeP(float* grad, float* first) {
  for (const PowerSgdMatrix& matrix : layout_.matrices) {
    float* q = q_.data() + matrix.q_offset;
    for (uint32_t c = 0; c < matrix.rank; ++c) {
      if (!OrthonormalizeColumn(q, matrix.cols, c)) {
        DrawQColumn(matrix, c);
        OrthonormalizeColumn(q, matrix.cols, c);
      }
    }

    // Row by row, so each row of M is still in cache for its products with Q.
    float* p = first + matrix.p_offset;
    for (uint64_t i = 0; i < matrix.rows; ++i) {
      float* row = grad + matrix.offset + i * matrix.cols;
      const float* error_row = error_.data() + matrix.error_offset + i * matrix.cols;
      for (uint64_t k = 0; k < matrix.cols; ++k) row[k] += error_row[k];
      for (uint32_t c = 0; c < matrix.rank; ++c) {
        p[c * matrix.rows + i] = Dot(row, q + c * matrix.cols, matrix.cols);
      }
    }
  }
  for (const PowerSgdPlain& plain : layout_.plain) {
    std::copy_n(grad + plain.offset, plain.count, first + plain.first_offset);
  }
}

void PowerSgdCompressor::ComputeQ(const float* grad, float* first, float* second) {
  for (const PowerSgdMatrix& matrix : layout_.matrices) {
    float* p = first + matrix.p_offset;
    for (uint32_t c = 0; c < matrix.rank; ++c) OrthonormalizeColumn(p, matrix.rows, c);

    // Q = M^T P, one row of M at a time: column c of Q gains p[i][c] * (row i of M).
    const float* m = grad + matrix.offset;
    float* q = second + matrix.q_offset;
    std::fill_n(q, matrix.rank * matrix.cols, 0.0f);
    for (uint64_t i = 0; i < matrix.rows; ++i) {
      const float* row = m + i * matrix.cols;
      for (uint32_t c = 0; c < matrix.rank; ++c) {
        const float weight = p[c * matrix.rows + i];
        float* q_column = q + c * matrix.cols;
        for (uint64_t k = 0; k < matrix.cols; ++k) q_column[k] += weight * row[k];
      }
    }
    std::copy_n(q, matrix.rank * matrix.cols, own_q_.data() + matrix.q_offset);
  }
}

void PowerSgdCompressor::Decompress(const float* first, const float* second, float* grad) {
  float* approximation = approximation_row_.data();
  float* own_share = own_share_row_.data();
  for (const PowerSgdMatrix& matrix : layout_.matrices) {
    const float* p = first + matrix.p_offset;
    const float* q = second + matrix.q_offset;
    const float* own_q = own_q_.data() + matrix.q_offset;
    float* m = grad + matrix.offset;
    float* error = error_.data() + matrix.error_offset;
    const uint64_t cols = matrix.cols;
    // Row i of P Q^T is the sum over c of p[i][c] * (column c of Q).
    for (uint64_t i = 0; i < matrix.rows; ++i) {
      std::fill_n(approximation, cols, 0.0f);
      std::fill_n(own_share, cols, 0.0f);
      for (uint32_t c = 0; c < matrix.rank; ++c) {
        const float weight = p[c * matrix.rows + i];
        const float* q_column = q + c * cols;
        const float* own_q_column = own_q + c * cols;
        for (uint64_t k = 0; k < cols; ++k) {
          approximation[k] += weight * q_column[k];
          own_share[k] += weight * own_q_column[k];
        }
      }
      float* row = m + i * cols;
      float* error_row = error + i * cols;
      for (uint64_t k = 0; k < cols; ++k) {
        error_row[k] = row[k] - own_share[k];
        row[k] = approximation[k];
      }
    }
  }
  std::copy(second, second + layout_.second_count, q_.begin());
  for (const PowerSgdPlain& plain : layout_.plain) {
    std::copy_n(first + plain.first_offset, plain.count, grad + plain.offset);
  }
}

}  // namespace cohort
