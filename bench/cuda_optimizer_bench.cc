// GPU optimizer step bandwidth against the device's own copy: one step of each built-in rule over
// a 64 Mi-element float32 block on CUDA device 0, against cudaMemcpy (device to device) of the
// same 256 MiB in the same run. Both figures are memory traffic per second: a copy reads and
// writes the buffer (2 x 256 MiB); SGD reads parameters and gradients and writes parameters
// (3 x), SGD with momentum also reads and writes the velocity (5 x), Adam reads and writes both
// moments (7 x). A ratio of 0.8 says the step moves its bytes at 80% of the copy's rate. Times are
// CUDA event times, median of the repetitions after one warm-up.
//
//   cuda_optimizer_bench [REPETITIONS=11]
//
// Prints JSON lines {"name", "value" (GB/s), "unit": "GB/s", "peer": "cudaMemcpy", "peer_value",
// "ratio"}: sgd_step, sgd_momentum_step, adam_step. Exits 77 where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/cuda_timing.h"
#include "runtime/optim/cuda/optimizer_kernels.h"

namespace {

constexpr uint64_t kCount = uint64_t{64} << 20;
constexpr uint64_t kBytes = kCount * sizeof(float);

using cohort::bench::Allocate;
using cohort::bench::MedianMilliseconds;

bool Check(cudaError_t error, const char* what) {
  return cohort::bench::Check(error, what, "cuda_optimizer_bench");
}

// `passes` of kBytes of traffic in `ms`, in GB/s.
double GigabytesPerSecond(int passes, double ms) {
  return static_cast<double>(passes) * static_cast<double>(kBytes) / (ms * 1e-3) / 1e9;
}

void Report(const char* name, int passes, double ms, double copy_ms) {
  cohort::bench::ReportAgainstCopy(name, GigabytesPerSecond(passes, ms),
                                   GigabytesPerSecond(2, copy_ms));
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 11;
  if (!cohort::bench::OpenFirstDevice("cuda_optimizer_bench")) return 77;

  cudaStream_t stream = nullptr;
  float *params = nullptr, *grads = nullptr, *first = nullptr, *second = nullptr;
  if (!Check(cudaStreamCreate(&stream), "cudaStreamCreate") || !Allocate(&params, kBytes) ||
      !Allocate(&grads, kBytes) || !Allocate(&first, kBytes) || !Allocate(&second, kBytes)) {
    return 1;
  }
  std::vector<float> host(kCount);
  for (uint64_t i = 0; i < kCount; ++i)
    host[i] = static_cast<float>((i * 2654435761u) % 20011) * 1e-4f - 1.0f;
  cudaMemcpy(params, host.data(), kBytes, cudaMemcpyHostToDevice);
  cudaMemcpy(grads, host.data(), kBytes, cudaMemcpyHostToDevice);
  cudaMemset(first, 0, kBytes);
  cudaMemset(second, 0, kBytes);

  const double copy_ms = MedianMilliseconds(repetitions, stream, [&] {
    cudaMemcpyAsync(first, grads, kBytes, cudaMemcpyDeviceToDevice, stream);
  });
  // Later steps (step > 1) read every buffer, as a trial's steps after its first do.
  cohort::DeviceBlock<float> block{params, grads, {first, second}, kCount, 2};
  const cohort::SgdSettings sgd{1e-3, 0, 0, false};
  const cohort::SgdSettings momentum{1e-3, 0, 0.9, false};
  const cohort::AdamSettings adam{1e-4, 0, 0.9, 0.999, 1e-8, false};
  Report(
      "sgd_step", 3,
      MedianMilliseconds(repetitions, stream, [&] { cohort::EnqueueSgdStep(block, sgd, stream); }),
      copy_ms);
  Report("sgd_momentum_step", 5,
         MedianMilliseconds(repetitions, stream,
                            [&] { cohort::EnqueueSgdStep(block, momentum, stream); }),
         copy_ms);
  Report("adam_step", 7,
         MedianMilliseconds(repetitions, stream,
                            [&] { cohort::EnqueueAdamStep(block, adam, stream); }),
         copy_ms);
  if (!Check(cudaStreamSynchronize(stream), "the benchmark's kernels")) return 1;
  return 0;
}
