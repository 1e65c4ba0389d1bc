#include "runtime/conformance/gradient_check.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

// Reads and writes one element of a float32 or float64 tensor as a double.
class Element {
 public:
  Element(void* base, cohort_dtype dtype, uint64_t index)
      : base_(base), dtype_(dtype), index_(index) {}
  double get() const {
    return dtype_ == COHORT_DTYPE_FLOAT32 ? static_cast<float*>(base_)[index_]
                                          : static_cast<double*>(base_)[index_];
  }
  void set(double v) const {
    if (dtype_ == COHORT_DTYPE_FLOAT32) {
      static_cast<float*>(base_)[index_] = static_cast<float>(v);
    } else {
      static_cast<double*>(base_)[index_] = v;
    }
  }

 private:
  void* base_;
  cohort_dtype dtype_;
  uint64_t index_;
};

absl::StatusOr<double> LossAfterTraining(LoadedModel& model, const BatchSpec& batch) {
  if (absl::Status s = model.arena().ZeroGradients(); !s.ok()) return s;
  absl::StatusOr<BatchMetrics> metrics = model.TrainBatch(batch);
  if (!metrics.ok()) return metrics.status();
  return metrics->Find("loss")->value;
}

std::vector<uint64_t> SampleIndices(uint64_t size, size_t wanted) {
  std::vector<uint64_t> indices;
  const uint64_t n = std::min<uint64_t>(size, std::max<size_t>(wanted, 1));
  for (uint64_t k = 0; k < n; ++k) indices.push_back(n == 1 ? 0 : k * (size - 1) / (n - 1));
  return indices;
}

}  // namespace

double LossRoundingError(cohort_dtype dtype, double loss, double step) {
  const double unit_roundoff = dtype == COHORT_DTYPE_FLOAT64 ? 0x1p-53 : 0x1p-24;
  return kLossRoundingUnits * unit_roundoff * std::fabs(loss) / std::fabs(step);
}

absl::StatusOr<GradientCheckReport> CheckGradients(LoadedModel& model, const BatchSpec& batch,
                                                   const GradientCheckOptions& options) {
  absl::StatusOr<std::string> saved_state = model.SaveState();
  if (!saved_state.ok()) return saved_state.status();

  // The loss and analytic gradient of the unperturbed parameters.
  absl::StatusOr<double> loss = LossAfterTraining(model, batch);
  if (!loss.ok()) return loss.status();
  TensorArena& arena = model.arena();
  struct Probe {
    size_t tensor;
    uint64_t index;
    double analytic;
  };
  std::vector<Probe> probes;
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    const TensorDescriptor& spec = arena.spec(t);
    if (spec.device.kind != COHORT_DEVICE_CPU ||
        (spec.dtype != COHORT_DTYPE_FLOAT32 && spec.dtype != COHORT_DTYPE_FLOAT64)) {
      continue;
    }
    for (uint64_t i : SampleIndices(spec.element_count, options.coordinates_per_tensor)) {
      probes.push_back(Probe{t, i, Element(arena.grad(t), spec.dtype, i).get()});
    }
  }
  if (probes.empty()) {
    return absl::UnimplementedError(
        "gradient check: the model has no float32/float64 CPU tensor to probe");
  }

  if (!(options.epsilon > 0)) {
    return absl::InvalidArgumentError("gradient check: the step must be above 0");
  }
  GradientCheckReport report;
  for (const Probe& p : probes) {
    const cohort_dtype dtype = arena.spec(p.tensor).dtype;
    const Element param(arena.data(p.tensor), dtype, p.index);
    const double original = param.get();
    param.set(original + options.epsilon);
    const double up = param.get();  // the value actually stored (float32 rounds)
    absl::StatusOr<double> loss_up = LossAfterTraining(model, batch);
    param.set(original - options.epsilon);
    const double down = param.get();
    absl::StatusOr<double> loss_down = LossAfterTraining(model, batch);
    param.set(original);
    if (!loss_up.ok()) return loss_up.status();
    if (!loss_down.ok()) return loss_down.status();

    const double magnitude =
        std::max({std::fabs(*loss), std::fabs(*loss_up), std::fabs(*loss_down)});
    const auto tolerance = [&](double numeric, double step) {
      return options.absolute_tolerance +
             options.relative_tolerance * std::max(std::fabs(p.analytic), std::fabs(numeric)) +
             LossRoundingError(dtype, magnitude, step);
    };
    const auto close = [&](double difference, double step) {
      const double numeric = difference / step;
      return std::fabs(p.analytic - numeric) <= tolerance(numeric, step);
    };
    const double numeric = (*loss_up - *loss_down) / (up - down);
    const double error = std::fabs(p.analytic - numeric);
    // Where a kink (a ReLU switching) lies within epsilon on one side, the one-sided difference
    // on the other side still equals the gradient at the point itself.
    const bool passed = close(*loss_up - *loss_down, up - down) ||
                        close(*loss_up - *loss, up - original) ||
                        close(*loss - *loss_down, original - down);
    report.coordinates.push_back(CoordinateCheck{arena.spec(p.tensor).name, p.index, p.analytic,
                                                 numeric, tolerance(numeric, up - down), passed});
    report.failures += passed ? 0 : 1;
    // A NaN error (a NaN gradient or loss) is the largest there is: std::max would skip it.
    report.max_abs_error = std::isnan(error) || std::isnan(report.max_abs_error)
                               ? std::nan("")
                               : std::max(report.max_abs_error, error);
  }

  if (absl::Status s = arena.ZeroGradients(); !s.ok()) return s;
  if (absl::Status s = model.LoadState(*saved_state); !s.ok()) return s;
  return report;
}

}  // namespace cohort
