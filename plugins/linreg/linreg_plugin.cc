// linreg_plugin.cc -- linear regression, a model small enough to check the runtime exactly.
//
// y_hat = weight . x + bias, loss = mean over the batch of 0.5 * (y_hat - y)^2, on the data of
// linreg_data.h. Tensors, in registration order: "weight" (dim floats, shape [1, dim]: one output
// row of dim inputs) and "bias" (1 float, shape [1]), float32 on the CPU. Both start at zero, so
// a test can derive the first gradients by hand, unless init_scale > 0: then element n (weight
// 0..dim-1, then the bias) is uniform in [-init_scale, init_scale), from the trial seed.
//
// Hyperparameters (all optional): dim (int, 4), train_records (int, 1000), validation_records
// (int, 200), init_scale (double, 0).
// Metrics: "loss" on both splits; in training also "batches_seen" (COHORT_REDUCE_MAX), the number
// of batches this model has trained, this one included. That count is the plugin's state: it
// survives a checkpoint as 8 bytes (a uint64 in the machine's byte order).
//
// With hyperparameter track_targets (bool, false) the model also keeps non-trainable state in
// two state tensors (ABI 1.4), as a BatchNorm keeps its statistics: "targets_seen" (int64, 1) and
// "target_mean" (float64, 1), the count and mean of the targets of the records this rank trained
// (each rank its own). Validation reports them as "targets_seen" and "target_mean"
// (COHORT_REDUCE_MAX, so one rank's values reach the report as they are).
#include <cohort/plugin.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "linreg_data.h"

namespace linreg {
namespace {

// The int hyperparameter `name` (or `fallback`), at least `minimum`.
uint64_t CountAtLeast(const cohort::Host& host, std::string_view name, int64_t fallback,
                      int64_t minimum) {
  const int64_t value = host.hparam_int_or(name, fallback);
  if (value < minimum) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "hyperparameter '" + std::string(name) + "' must be at least " +
                            std::to_string(minimum) + ", got " + std::to_string(value));
  }
  return static_cast<uint64_t>(value);
}

// Uniform in [-scale, scale): draw n of the SplitMix64 sequence seeded with `seed`.
float Uniform(uint64_t seed, uint64_t n, double scale) {
  uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<float>((2.0 * unit - 1.0) * scale);
}

class LinregModel : public cohort::Model {
 public:
  static constexpr uint32_t host_minor_required = 4;  // state tensors, with track_targets

  explicit LinregModel(cohort::Host& host)
      : Model(host),
        dim_(CountAtLeast(host, "dim", 4, 1)),
        train_records_(CountAtLeast(host, "train_records", 1000, 1)),
        validation_records_(CountAtLeast(host, "validation_records", 200, 0)) {
    const double init_scale = host.hparam_double_or("init_scale", 0.0);
    if (!(init_scale >= 0)) {
      throw cohort::Error(
          COHORT_STATUS_INVALID_ARGUMENT,
          "hyperparameter 'init_scale' must be >= 0, got " + std::to_string(init_scale));
    }
    std::vector<cohort::TensorSpec> specs = {
        {.name = "weight", .element_count = dim_, .on_host_cpu = true, .shape = {1, dim_}},
        {.name = "bias", .element_count = 1, .on_host_cpu = true, .shape = {1}},
    };
    if (host.hparam_bool_or("track_targets", false)) {
      specs.push_back({.name = "targets_seen",
                       .element_count = 1,
                       .dtype = COHORT_DTYPE_INT64,
                       .on_host_cpu = true,
                       .kind = COHORT_TENSOR_STATE});
      specs.push_back({.name = "target_mean",
                       .element_count = 1,
                       .dtype = COHORT_DTYPE_FLOAT64,
                       .on_host_cpu = true,
                       .kind = COHORT_TENSOR_STATE});
    }
    const std::vector<cohort::TensorView> views = host.register_tensors(specs);
    weight_ = views[0];
    bias_ = views[1];
    if (views.size() > 2) {
      targets_seen_ = views[2];
      target_mean_ = views[3];
    }
    if (init_scale > 0) {
      const uint64_t seed = host.context().trial_seed;
      for (uint64_t j = 0; j < dim_; ++j) weight_.data<float>()[j] = Uniform(seed, j, init_scale);
      bias_.data<float>()[0] = Uniform(seed, dim_, init_scale);
    }  // else the host's zeroes stand
  }

  uint64_t dataset_size(cohort_split split) override { return Records(split); }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    std::vector<double> weight_grad(dim_, 0.0);
    double bias_grad = 0;
    double loss = 0;
    for (uint64_t r = 0; r < batch.size(); ++r) {
      const double error = Residual(batch.split(), batch[r]);
      loss += 0.5 * error * error;
      for (uint64_t j = 0; j < dim_; ++j) {
        weight_grad[j] += error * Feature(batch.split(), batch[r], j);
      }
      bias_grad += error;
    }
    const double scale = batch.size() == 0 ? 0.0 : 1.0 / static_cast<double>(batch.size());
    for (uint64_t j = 0; j < dim_; ++j) {
      weight_.grad<float>()[j] += static_cast<float>(weight_grad[j] * scale);
    }
    bias_.grad<float>()[0] += static_cast<float>(bias_grad * scale);
    host().gradients_ready(weight_);
    host().gradients_ready(bias_);
    if (targets_seen_.is_state()) {
      int64_t& seen = *targets_seen_.data<int64_t>();
      double& mean = *target_mean_.data<double>();
      for (uint64_t r = 0; r < batch.size(); ++r) {
        ++seen;
        mean += (Target(batch.split(), batch[r], dim_) - mean) / static_cast<double>(seen);
      }
    }

    ++batches_seen_;
    metrics.add("loss", loss * scale, batch.size());
    metrics.add("batches_seen", static_cast<double>(batches_seen_), batch.size(),
                COHORT_REDUCE_MAX);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    double loss = 0;
    for (uint64_t r = 0; r < batch.size(); ++r) {
      const double error = Residual(batch.split(), batch[r]);
      loss += 0.5 * error * error;
    }
    const double scale = batch.size() == 0 ? 0.0 : 1.0 / static_cast<double>(batch.size());
    metrics.add("loss", loss * scale, batch.size());
    if (targets_seen_.is_state()) {
      metrics.add("targets_seen", static_cast<double>(*targets_seen_.data<int64_t>()), batch.size(),
                  COHORT_REDUCE_MAX);
      metrics.add("target_mean", *target_mean_.data<double>(), batch.size(), COHORT_REDUCE_MAX);
    }
  }

  void save_state(cohort::Writer& writer) override { writer.write_value(batches_seen_); }

  void load_state(cohort::Reader& reader) override {
    if (reader.remaining() != sizeof batches_seen_) {
      throw cohort::Error(COHORT_STATUS_DATA_LOSS,
                          "linreg state is " + std::to_string(reader.remaining()) +
                              " bytes, expected " + std::to_string(sizeof batches_seen_));
    }
    batches_seen_ = reader.read_value<uint64_t>();
  }

 private:
  uint64_t Records(cohort_split split) const {
    return split == COHORT_SPLIT_TRAINING ? train_records_ : validation_records_;
  }

  // y_hat - y for record i of `split`, in double.
  double Residual(cohort_split split, uint64_t i) const {
    if (i >= Records(split)) {
      throw cohort::Error(COHORT_STATUS_OUT_OF_RANGE,
                          "record " + std::to_string(i) + " is outside the split's " +
                              std::to_string(Records(split)) + " records");
    }
    double y_hat = bias_.data<float>()[0];
    for (uint64_t j = 0; j < dim_; ++j) y_hat += weight_.data<float>()[j] * Feature(split, i, j);
    return y_hat - Target(split, i, dim_);
  }

  const uint64_t dim_;
  const uint64_t train_records_;
  const uint64_t validation_records_;
  cohort::TensorView weight_;
  cohort::TensorView bias_;
  cohort::TensorView targets_seen_;  // state tensors, with track_targets
  cohort::TensorView target_mean_;
  uint64_t batches_seen_ = 0;
};

}  // namespace
}  // namespace linreg

COHORT_PLUGIN(linreg::LinregModel, "linreg")
