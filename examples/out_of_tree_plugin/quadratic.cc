// An out-of-tree model plugin: built with nothing but the installed SDK headers, found through
// `pkg-config cohort-sdk` (see the Makefile beside it).
//
// Model: a vector `w` of `dim` float32 values fitted to targets t_r[j] = sin(r + j); the loss is
// the batch mean of 0.5 * |w - t_r|^2.
#include <cmath>
#include <cohort/plugin.hpp>

class Quadratic : public cohort::Model {
 public:
  explicit Quadratic(cohort::Host& host) : Model(host), dim_(host.hparam_int_or("dim", 8)) {
    if (dim_ <= 0) throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, "dim must be positive");
    w_ = host.register_tensors({{"w", static_cast<uint64_t>(dim_)}})[0];
    host.info("quadratic model created");
  }

  uint64_t dataset_size(cohort_split split) override {
    return split == COHORT_SPLIT_TRAINING ? 1000 : 100;
  }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    metrics.add("loss", Loss(batch, w_.grad<float>()), batch.size());
    host().gradients_ready(w_);
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    metrics.add("loss", Loss(batch, nullptr), batch.size());
  }

 private:
  // Mean loss over the batch; adds its gradient into `grad` when given.
  double Loss(const cohort::Batch& batch, float* grad) const {
    const float* w = w_.data<float>();
    const double n = static_cast<double>(batch.size());
    double loss = 0;
    for (uint64_t i = 0; i < batch.size(); ++i) {
      for (int64_t j = 0; j < dim_; ++j) {
        const double d = w[j] - std::sin(static_cast<double>(batch[i] + static_cast<uint64_t>(j)));
        loss += 0.5 * d * d / n;
        if (grad != nullptr) grad[j] += static_cast<float>(d / n);
      }
    }
    return loss;
  }

  int64_t dim_;
  cohort::TensorView w_;
};

COHORT_PLUGIN(Quadratic, "quadratic")
