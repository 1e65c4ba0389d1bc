// A plugin whose backward runs on threads of its own, as a framework's does, each reporting its
// tensor's gradient ready from that thread (SDK 1.2), so it declares host_minor_required 2.
//
// Model: 4 float32 tensors "t0".."t3" of 5 elements; record r has target t[k][j] = r + k + j;
// loss = the batch mean of 0.5 * sum |t - target|^2. train_batch computes tensor k's gradient on
// thread k, which calls gradients_ready for it; the threads are joined before train_batch
// returns.
#include <cohort/plugin.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kTensors = 4;
constexpr uint64_t kElements = 5;

class ThreadedReadyModel : public cohort::Model {
 public:
  static constexpr uint32_t host_minor_required = 2;

  explicit ThreadedReadyModel(cohort::Host& host) : Model(host) {
    std::vector<cohort::TensorSpec> specs;
    for (int k = 0; k < kTensors; ++k) specs.push_back({"t" + std::to_string(k), kElements});
    tensors_ = host.register_tensors(specs);
  }

  uint64_t dataset_size(cohort_split) override { return 16; }

  void train_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    std::vector<double> losses(kTensors, 0.0);
    std::vector<std::thread> backward;
    for (int k = 0; k < kTensors; ++k) {
      backward.emplace_back([&, k] {
        const cohort::TensorView& tensor = tensors_[static_cast<size_t>(k)];
        float* value = tensor.data<float>();
        float* grad = tensor.grad<float>();
        const double n = static_cast<double>(batch.size());
        for (uint64_t i = 0; i < batch.size(); ++i) {
          for (uint64_t j = 0; j < kElements; ++j) {
            const double d =
                value[j] - static_cast<double>(batch[i] + static_cast<uint64_t>(k) + j);
            losses[static_cast<size_t>(k)] += 0.5 * d * d / n;
            grad[j] += static_cast<float>(d / n);
          }
        }
        host().gradients_ready(tensor);
      });
    }
    for (std::thread& thread : backward) thread.join();
    double loss = 0;
    for (double part : losses) loss += part;
    metrics.add("loss", loss, batch.size());
  }

  void evaluate_batch(const cohort::Batch& batch, cohort::Metrics& metrics) override {
    metrics.add("records", static_cast<double>(batch.size()), batch.size(), COHORT_REDUCE_SUM);
  }

 private:
  std::vector<cohort::TensorView> tensors_;
};

}  // namespace

COHORT_PLUGIN(ThreadedReadyModel, "threaded_ready")
