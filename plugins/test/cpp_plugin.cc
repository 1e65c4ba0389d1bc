// A plugin written with the header-only C++ layer, exercising what it generates: error
// conversion of thrown exceptions, an optimizer_step override, and state through Writer/Reader.
//
// Model: tensor "w" (float64, 2 elements); record r has target (r, -r); loss = mean of
// 0.5 * |w - t_r|^2. Hyperparameter "throw_in_train" picks what train_batch throws:
// "cohort" (cohort::Error NOT_FOUND), "std" (std::runtime_error), "other" (an int), or nothing.
// Hyperparameter "w_init" ([a, b], through hparam_text): w's initial values.
// Hyperparameter "state_holds_w" (bool): its state also holds w, which load_state checks against
// the tensor (the host restores tensors before load_state: FAILED_PRECONDITION when they differ).
#include <cohort/plugin.hpp>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

class CppModel : public cohort::Model {
 public:
  explicit CppModel(cohort::Host& host)
      : Model(host),
        throw_in_train_(host.hparam_string_or("throw_in_train", "")),
        learning_rate_(host.hparam_double_or("learning_rate", 0.5)),
        state_holds_w_(host.hparam_bool_or("state_holds_w", false)) {
    w_ = host.register_tensors({{"w", 2, COHORT_DTYPE_FLOAT64}})[0];
    // "w_init" (a list of two numbers, read as its YAML text: SDK 1.5): w's initial values.
    if (host.hparam_type("w_init") == COHORT_HPARAM_OTHER) {
      const std::string text = host.hparam_text("w_init");
      double* w = w_.data<double>();
      if (std::sscanf(text.c_str(), "[%lf, %lf]", &w[0], &w[1]) != 2) {
        throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT, "w_init is not [a, b]: " + text);
      }
    }
  }

  uint64_t dataset_size(cohort_split) override { return 8; }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    if (throw_in_train_ == "cohort") throw cohort::Error(COHORT_STATUS_NOT_FOUND, "no record 99");
    if (throw_in_train_ == "std") throw std::runtime_error("vector too long");
    if (throw_in_train_ == "other") throw 42;
    double* w = w_.data<double>();
    double* g = w_.grad<double>();
    double loss = 0;
    for (uint64_t i = 0; i < batch.size(); ++i) {
      const double t[2] = {static_cast<double>(batch[i]), -static_cast<double>(batch[i])};
      for (int j = 0; j < 2; ++j) {
        const double d = w[j] - t[j];
        loss += 0.5 * d * d / static_cast<double>(batch.size());
        g[j] += d / static_cast<double>(batch.size());
      }
    }
    host().gradients_ready(w_);
    metrics.add("loss", loss, batch.size());
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    metrics.add("records", static_cast<double>(batch.size()), batch.size(), COHORT_REDUCE_SUM);
  }

  void optimizer_step(const cohort_step_info& step) override {
    for (int j = 0; j < 2; ++j) w_.data<double>()[j] -= learning_rate_ * w_.grad<double>()[j];
    steps_ = step.step + 1;
  }

  void save_state(cohort::Writer& writer) override {
    writer.write_value(steps_);
    if (state_holds_w_) {
      for (int j = 0; j < 2; ++j) writer.write_value(w_.data<double>()[j]);
    }
  }
  void load_state(cohort::Reader& reader) override {
    steps_ = reader.read_value<uint64_t>();
    if (!state_holds_w_) return;
    for (int j = 0; j < 2; ++j) {
      const double saved = reader.read_value<double>();
      if (saved != w_.data<double>()[j]) {
        throw cohort::Error(COHORT_STATUS_FAILED_PRECONDITION, "w is not yet the checkpoint's");
      }
    }
  }

 private:
  std::string throw_in_train_;
  double learning_rate_;
  bool state_holds_w_;
  cohort::TensorView w_;
  uint64_t steps_ = 0;
};

}  // namespace

COHORT_PLUGIN(CppModel, "cpp_layer")
