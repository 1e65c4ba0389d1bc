// The peer of the GPU step-time benchmark (mlp_cuda_step.py): mlp_cuda's model trained by a plain
// CUDA loop, with no runtime: the plugin's own network (CudaMlpNetwork: its kernels and cuBLAS
// calls) and batch gather (DeviceDataset) on one stream, plain SGD as one cuBLAS axpy over all the
// parameters, the gradients zeroed by one memset, and the loss read back only every REPORT_EVERY
// batches, as a hand-written loop that logs now and then does. The data, widths and
// initialization are those of `cohort run` with the mlp_cuda plugin and the same
// hyperparameters; batches are drawn in a shuffled order per epoch.
//
//   mlp_cuda_loop BATCH BATCHES [HIDDEN=256] [HIDDEN_LAYERS=2] [RECORDS=2048] [REPORT_EVERY=20]
//
// Times the batches after the first REPORT_EVERY (a warm-up) and prints one JSON line:
// {"records_per_second": R, "batch": B, "batches": N, "loss": L}. Exits 77 where no CUDA device is
// usable.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "cuda_mlp_network.h"
#include "device_dataset.h"
#include "synthetic_dataset.h"

namespace {

constexpr size_t kInputDim = 32;  // the mlp plugin's synthetic defaults
constexpr size_t kClasses = 10;
constexpr float kLearningRate = 0.05f;
constexpr uint64_t kSeed = 11;

uint64_t Argument(int argc, char** argv, int index, uint64_t fallback) {
  return argc > index ? std::strtoull(argv[index], nullptr, 10) : fallback;
}

int Run(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: mlp_cuda_loop BATCH BATCHES [HIDDEN=256] [HIDDEN_LAYERS=2] "
                 "[RECORDS=2048] [REPORT_EVERY=20]\n");
    return 2;
  }
  const uint64_t batch = Argument(argc, argv, 1, 16);
  const uint64_t batches = Argument(argc, argv, 2, 1000);
  const uint64_t hidden = Argument(argc, argv, 3, 256);
  const uint64_t hidden_layers = Argument(argc, argv, 4, 2);
  const uint64_t records = Argument(argc, argv, 5, 2048);
  const uint64_t report_every = std::max<uint64_t>(1, Argument(argc, argv, 6, 20));
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mlp_cuda_loop: no usable CUDA device\n");
    return 77;
  }

  std::vector<size_t> widths = {kInputDim};
  for (uint64_t l = 0; l < hidden_layers; ++l) widths.push_back(hidden);
  widths.push_back(kClasses);
  cudaStream_t stream = nullptr;
  mlp::Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cublasHandle_t blas = nullptr;
  mlp::Check(cublasCreate(&blas), "cublasCreate");
  mlp::Check(cublasSetStream(blas, stream), "cublasSetStream");

  // Parameters and gradients each in one buffer, layer by layer (weight, then bias).
  mlp::CudaMlpNetwork network(widths, stream);
  size_t total = 0;
  for (size_t l = 0; l < network.layer_count(); ++l) {
    total += network.weight_count(l) + network.fan_out(l);
  }
  mlp::DeviceArray<float> params;
  mlp::DeviceArray<float> grads;
  float* p = params.Reserve(total);
  float* g = grads.Reserve(total);
  std::vector<mlp::LayerBuffers<float>> writable;
  std::vector<mlp::LayerParams> layer_params;
  std::vector<mlp::LayerGrads> layer_grads;
  for (size_t l = 0, at = 0; l < network.layer_count(); ++l) {
    const size_t weights = network.weight_count(l);
    writable.push_back({p + at, p + at + weights});
    layer_params.push_back({p + at, p + at + weights});
    layer_grads.push_back({g + at, g + at + weights});
    at += weights + network.fan_out(l);
  }
  network.Initialize(kSeed, writable);
  mlp::Check(cudaMemsetAsync(g, 0, total * sizeof(float), stream), "zeroing the gradients");

  const mlp::SyntheticDataset data(COHORT_SPLIT_TRAINING, records, kInputDim, kClasses);
  mlp::DeviceDataset on_device(data, stream);
  std::vector<uint64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 shuffle(kSeed);
  std::vector<uint64_t> indices(batch);
  uint64_t next = records;  // position in `order`; a new epoch reshuffles

  const float step = -kLearningRate;
  double loss = 0;
  std::chrono::steady_clock::time_point start;
  for (uint64_t b = 0; b < batches; ++b) {
    if (b == report_every) {
      mlp::Check(cudaStreamSynchronize(stream), "the warm-up");
      start = std::chrono::steady_clock::now();
    }
    for (uint64_t i = 0; i < batch; ++i) {
      if (next == records) {
        std::shuffle(order.begin(), order.end(), shuffle);
        next = 0;
      }
      indices[i] = order[next++];
    }
    const cohort_batch raw{COHORT_STRUCT_SIZE(cohort_batch, record_count),
                           COHORT_SPLIT_TRAINING,
                           b,
                           0,
                           indices.data(),
                           batch};
    network.Train(layer_params, layer_grads, on_device.Gather(cohort::Batch{&raw}), {});
    mlp::Check(cublasSaxpy(blas, static_cast<int>(total), &step, g, 1, p, 1), "cublasSaxpy");
    mlp::Check(cudaMemsetAsync(g, 0, total * sizeof(float), stream), "zeroing the gradients");
    if ((b + 1) % report_every == 0) loss = network.Totals().mean_loss();
  }
  mlp::Check(cudaStreamSynchronize(stream), "the last batch");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t timed = batches > report_every ? batches - report_every : 0;
  std::printf(
      "{\"records_per_second\": %.1f, \"batch\": %llu, \"batches\": %llu, \"loss\": %.6g}\n",
      seconds > 0 ? static_cast<double>(timed * batch) / seconds : 0.0,
      static_cast<unsigned long long>(batch), static_cast<unsigned long long>(timed), loss);
  cublasDestroy(blas);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_cuda_loop: %s\n", e.what());
    return 1;
  }
}
