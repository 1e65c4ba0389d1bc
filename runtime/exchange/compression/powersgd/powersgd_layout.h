// PowerSgdLayout: which tensors of a bucket PowerSGD compresses and where each one's factors,
// values and error live, plus the seeded starting Q. Shared by the CPU compressor
// (powersgd_codec.h) and the CUDA reducer, so both lay out and seed a bucket identically.
//
//   PowerSgdLayout layout = LayOutPowerSgd(tensors, /*rank=*/4);
//   for (const PowerSgdMatrix& m : layout.matrices) ...   // P at first[m.p_offset], r columns
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_LAYOUT_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_LAYOUT_H_

#include <cstdint>
#include <vector>

namespace cohort {

// One tensor inside a bucket: `offset` elements from the bucket's start, rows * cols elements,
// row-major. A tensor without a matrix shape (1-D, or unknown) is given with cols == 1.
struct PowerSgdTensor {
  uint64_t offset = 0;
  uint64_t rows = 0;
  uint64_t cols = 0;
};

// A compressed tensor.
struct PowerSgdMatrix {
  uint64_t offset = 0;  // in the bucket
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint32_t rank = 0;          // effective rank: min(requested rank, rows, cols)
  uint64_t index = 0;         // position in the list laid out (keys the starting Q)
  uint64_t p_offset = 0;      // in `first`: rank columns of `rows` floats
  uint64_t q_offset = 0;      // in `second` (and the kept Q): rank columns of `cols` floats
  uint64_t error_offset = 0;  // in the error: rows * cols floats, row-major
};

// A tensor sent uncompressed.
struct PowerSgdPlain {
  uint64_t offset = 0;  // in the bucket
  uint64_t count = 0;
  uint64_t first_offset = 0;  // in `first`, after every P
};

struct PowerSgdLayout {
  std::vector<PowerSgdMatrix> matrices;
  std::vector<PowerSgdPlain> plain;
  uint64_t first_count = 0;   // every P, then every plain tensor's values
  uint64_t second_count = 0;  // every Q
  uint64_t error_count = 0;   // every compressed tensor's rows * cols
  uint64_t widest = 0;        // the largest cols of a compressed tensor
};

// A tensor is compressed when rows > 1, cols > 1 and r * (rows + cols) < rows * cols, with
// r = min(max(rank, 1), rows, cols) (compression must save floats); the others go plain.
PowerSgdLayout LayOutPowerSgd(const std::vector<PowerSgdTensor>& tensors, uint32_t rank);

// Writes column `column` of the starting Q of tensor `index` to out[0, cols): uniform values in
// [-1, 1) in steps of 2^-23 (exact in float) from a SplitMix64 stream keyed by (seed, index,
// column).
void DrawStartingQColumn(uint64_t seed, uint64_t index, uint32_t column, uint64_t cols, float* out);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_LAYOUT_H_
