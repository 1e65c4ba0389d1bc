// CheckGradients: compares a plugin's gradients with central finite differences of its "loss",
// through the C ABI, the way the runtime will drive it.
//
// For a sample of coordinates of every float32/float64 CPU tensor, the parameter is moved by
// +epsilon and -epsilon, train_batch is run on the same batch, and (loss+ - loss-) / 2 epsilon is
// compared with the gradient train_batch wrote. A coordinate passes when
//   |analytic - numeric| <= absolute_tolerance + relative_tolerance * max(|analytic|, |numeric|)
//                           + rounding
// for the central difference, or for one of the one-sided differences (a ReLU kink within epsilon
// on one side spoils the central difference but not the other side's). `rounding` is what the
// loss's own rounding does to a difference quotient: a model computes its loss in its tensors'
// precision, so a float32 loss near 2.3 moves in steps of 2.4e-7, which over a step of 2e-3 is an
// error of 1.2e-4 in the quotient however right the gradient is. It is kLossRoundingUnits units in
// the last place of the tensor's dtype at the loss's magnitude, over the step.
// Parameters, gradients (left zeroed) and the plugin's saved state are restored afterwards.
#ifndef COHORT_RUNTIME_CONFORMANCE_GRADIENT_CHECK_H_
#define COHORT_RUNTIME_CONFORMANCE_GRADIENT_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/plugin/loaded_model.h"

namespace cohort {

struct GradientCheckOptions {
  size_t coordinates_per_tensor = 6;  // first, last, and evenly spread ones between
  double epsilon = 1e-3;              // the step; > 0
  double relative_tolerance = 2e-2;
  double absolute_tolerance = 1e-4;
};

// Units in the last place of a loss that its rounding may move it by (the sums behind a loss
// round at every step, not once).
inline constexpr double kLossRoundingUnits = 8;

// The error a difference quotient over `step` may carry from a loss of magnitude `loss` computed
// in `dtype` (float32 or float64): kLossRoundingUnits of its unit roundoff times |loss|, / step.
double LossRoundingError(cohort_dtype dtype, double loss, double step);

struct CoordinateCheck {
  std::string tensor;
  uint64_t index;
  double analytic;
  double numeric;
  double tolerance;  // what |analytic - numeric| was allowed, rounding included
  bool passed;
};

struct GradientCheckReport {
  std::vector<CoordinateCheck> coordinates;
  size_t failures = 0;
  double max_abs_error = 0;  // NaN when one coordinate's was
  bool passed() const { return failures == 0 && !coordinates.empty(); }
};

// UNIMPLEMENTED when no tensor is a float32/float64 CPU tensor; plugin errors pass through.
absl::StatusOr<GradientCheckReport> CheckGradients(LoadedModel& model, const BatchSpec& batch,
                                                   const GradientCheckOptions& options = {});

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFORMANCE_GRADIENT_CHECK_H_
