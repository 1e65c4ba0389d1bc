// The mlp_cuda example's network (cuBLAS and its kernels) against the CPU mlp network: from the
// same parameters and batch, the same loss, hits and gradients, to float32 rounding (cuBLAS sums
// in its own order). Also that gradients accumulate into what the buffers held, as the CPU
// network's do. Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_mlp_network.h"
#include "gtest/gtest.h"
#include "mlp_cuda_kernels.h"
#include "mlp_network.h"

namespace mlp {
namespace {

// A float buffer on the device, filled from and read back into host vectors.
class DeviceFloats {
 public:
  explicit DeviceFloats(const std::vector<float>& values) : count_(values.size()) {
    void* memory = nullptr;
    EXPECT_EQ(cudaMalloc(&memory, count_ * sizeof(float)), cudaSuccess);
    data_ = static_cast<float*>(memory);
    EXPECT_EQ(cudaMemcpy(data_, values.data(), count_ * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(data_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* data() const { return data_; }
  std::vector<float> Read() const {
    std::vector<float> values(count_);
    EXPECT_EQ(cudaMemcpy(values.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }

 private:
  float* data_ = nullptr;
  size_t count_;
};

// A reproducible value in [-1, 1) for element i of stream `key`.
float Pseudo(uint64_t key, uint64_t i) {
  uint64_t h = (key + 1) * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return static_cast<float>(static_cast<double>(h >> 11) / static_cast<double>(1ull << 53)) * 2 - 1;
}

std::vector<float> Values(uint64_t key, size_t count, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Pseudo(key, i) * scale;
  return values;
}

// Every element within `tolerance` times the largest magnitude of `want`.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float tolerance,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::abs(v));
  ASSERT_GT(largest, 0.0f) << what << " is all zeros, so the comparison would prove nothing";
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance * largest) << what << " element " << i;
  }
}

struct Case {
  std::vector<size_t> widths;
  size_t batch;
};

class CudaMlpTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaMlpTest, MatchesTheCpuNetwork) {
  const Case& c = GetParam();
  MlpNetwork cpu(c.widths);
  const size_t layers = cpu.layer_count();
  std::vector<std::vector<float>> weights, biases, weight_grads, bias_grads;
  for (size_t l = 0; l < layers; ++l) {
    weights.push_back(Values(10 + l, cpu.weight_count(l), 0.3f));
    biases.push_back(Values(20 + l, cpu.fan_out(l), 0.1f));
    // Gradients start non-zero: both networks add to what the buffers hold.
    weight_grads.push_back(Values(30 + l, cpu.weight_count(l), 0.01f));
    bias_grads.push_back(Values(40 + l, cpu.fan_out(l), 0.01f));
  }
  const std::vector<float> inputs = Values(50, c.batch * c.widths.front(), 1.0f);
  std::vector<int32_t> labels(c.batch);
  for (size_t r = 0; r < c.batch; ++r) {
    labels[r] = static_cast<int32_t>((r * 7 + 3) % c.widths.back());
  }

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::vector<std::unique_ptr<DeviceFloats>> device;  // per layer: weight, bias, dW, db
  std::vector<LayerParams> device_params;
  std::vector<LayerGrads> device_grads;
  for (size_t l = 0; l < layers; ++l) {
    for (const std::vector<float>* v : {&weights[l], &biases[l], &weight_grads[l], &bias_grads[l]})
      device.push_back(std::make_unique<DeviceFloats>(*v));
    device_params.push_back({device[4 * l]->data(), device[4 * l + 1]->data()});
    device_grads.push_back({device[4 * l + 2]->data(), device[4 * l + 3]->data()});
  }
  std::vector<LayerParams> host_params;
  std::vector<LayerGrads> host_grads;
  for (size_t l = 0; l < layers; ++l) {
    host_params.push_back({weights[l].data(), biases[l].data()});
    host_grads.push_back({weight_grads[l].data(), bias_grads[l].data()});
  }

  BatchStats on_gpu;
  std::vector<size_t> gpu_order, cpu_order;
  {
    CudaMlpNetwork gpu(c.widths, stream);
    gpu.Train(device_params, device_grads, gpu.CopyIn(inputs.data(), labels.data(), c.batch),
              [&](size_t l) { gpu_order.push_back(l); });
    on_gpu = gpu.Totals();
    // The totals the plugin reports from the device are the host's formulas over those sums.
    double totals[kTotals] = {};
    ASSERT_EQ(cudaMemcpy(totals, gpu.device_totals(), sizeof totals, cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(totals[kMeanLoss], on_gpu.mean_loss());
    EXPECT_EQ(totals[kAccuracy], on_gpu.accuracy());
    // Evaluation after training reuses the scratch buffers at another batch size.
    gpu.Evaluate(device_params, gpu.CopyIn(inputs.data(), labels.data(), c.batch / 2 + 1));
    const BatchStats evaluated = gpu.Totals();
    MlpNetwork reference(c.widths);
    const BatchStats expected =
        reference.Evaluate(host_params, inputs.data(), labels.data(), c.batch / 2 + 1);
    EXPECT_NEAR(evaluated.loss_sum, expected.loss_sum, 1e-4 * expected.loss_sum);
  }
  const BatchStats on_cpu = cpu.Train(host_params, host_grads, inputs.data(), labels.data(),
                                      c.batch, [&](size_t l) { cpu_order.push_back(l); });
  EXPECT_EQ(gpu_order, cpu_order);
  EXPECT_EQ(on_gpu.records, on_cpu.records);
  EXPECT_NEAR(on_gpu.loss_sum, on_cpu.loss_sum, 1e-4 * on_cpu.loss_sum);
  EXPECT_EQ(on_gpu.correct, on_cpu.correct);
  for (size_t l = 0; l < layers; ++l) {
    ExpectClose(device[4 * l + 2]->Read(), weight_grads[l], 1e-4f, "a weight gradient");
    ExpectClose(device[4 * l + 3]->Read(), bias_grads[l], 1e-4f, "a bias gradient");
  }
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaMlpTest,
                         ::testing::Values(Case{{20, 64, 64, 10}, 16},
                                           Case{{784, 256, 256, 10}, 16}, Case{{33, 17, 5}, 7},
                                           Case{{12, 3}, 40}));

}  // namespace
}  // namespace mlp
