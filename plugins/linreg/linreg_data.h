// linreg_data.h -- the linear regression plugin's data, as formulas a test can recompute.
//
// Record i of split s (s = 0 for COHORT_SPLIT_TRAINING, 1 for COHORT_SPLIT_VALIDATION) has `dim`
// features and one target:
//
//   x_j = (((i * 7 + j * 3 + s * 5) % 11) - 5) / 5.0      for j in [0, dim)
//   y   = 0.5 + sum_j 0.1 * (j + 1) * x_j
//
// so every feature is one of -1, -0.8, ..., 1, and the exact solution is w_j = 0.1 * (j + 1),
// b = 0.5. The model (linreg_plugin.cc) predicts y_hat = w . x + b and its loss over a batch is
// the mean of 0.5 * (y_hat - y)^2, so with w = 0 and b = 0 the gradient of the loss over a batch
// B is  dL/dw_j = -mean_{i in B} y_i * x_ij  and  dL/db = -mean_{i in B} y_i.
//
// Everything is computed in double; the plugin rounds to float32 only when it writes a gradient.
// Header-only, no state.
#ifndef COHORT_PLUGINS_LINREG_LINREG_DATA_H_
#define COHORT_PLUGINS_LINREG_LINREG_DATA_H_

#include <cohort/plugin.h>

#include <cstdint>

namespace linreg {

// s in the formulas above.
inline uint64_t SplitOrdinal(cohort_split split) {
  return split == COHORT_SPLIT_VALIDATION ? 1 : 0;
}

// Feature j of record i of `split`.
inline double Feature(cohort_split split, uint64_t i, uint64_t j) {
  const uint64_t r = (i * 7 + j * 3 + SplitOrdinal(split) * 5) % 11;
  return (static_cast<double>(r) - 5.0) / 5.0;
}

// The target of record i of `split`, for `dim` features.
inline double Target(cohort_split split, uint64_t i, uint64_t dim) {
  double y = 0.5;
  for (uint64_t j = 0; j < dim; ++j) y += 0.1 * static_cast<double>(j + 1) * Feature(split, i, j);
  return y;
}

}  // namespace linreg

#endif  // COHORT_PLUGINS_LINREG_LINREG_DATA_H_
