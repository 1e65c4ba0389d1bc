// GPU codec throughput against the device's own copy: each codec kernel pass over a 256 MiB
// float32 buffer on CUDA device 0, against cudaMemcpy (device to device) of the same buffer in the
// same run. A pass that reads the floats and writes 16-bit words moves 1.5x the bytes of the
// float32 buffer, a copy moves 2x; the figure reported is float32 bytes of gradient per second,
// so a ratio of 0.8 says the codec handles gradients at 80% of the rate the device copies them.
// Times are CUDA event times, median of the repetitions after one warm-up.
//
//   cuda_codec_bench [REPETITIONS=11]
//
// Prints JSON lines {"name", "value" (GB/s of float32 gradient), "unit": "GB/s", "peer":
// "cudaMemcpy", "peer_value", "ratio"}: fp16_encode, fp16_decode, bf16_encode, bf16_decode,
// scale, topk_0.01_compress. Exits 77 where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bench/cuda_timing.h"
#include "runtime/exchange/compression/topk/topk_codec.h"
#include "runtime/exchange/cuda/exchange_kernels.h"
#include "runtime/exchange/cuda/topk_kernels.h"

namespace {

constexpr uint64_t kCount = uint64_t{64} << 20;  // floats: 256 MiB
constexpr uint64_t kBytes = kCount * sizeof(float);

using cohort::bench::Allocate;
using cohort::bench::MedianMilliseconds;

bool Check(cudaError_t error, const char* what) {
  return cohort::bench::Check(error, what, "cuda_codec_bench");
}

double GigabytesPerSecond(double ms) { return static_cast<double>(kBytes) / (ms * 1e-3) / 1e9; }

void Report(const char* name, double ms, double copy_ms) {
  cohort::bench::ReportAgainstCopy(name, GigabytesPerSecond(ms), GigabytesPerSecond(copy_ms));
}

}  // namespace

int main(int argc, char** argv) {
  using cohort::WireFormat;
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 11;
  if (!cohort::bench::OpenFirstDevice("cuda_codec_bench")) return 77;

  cudaStream_t stream = nullptr;
  float* grad = nullptr;
  float* copy = nullptr;
  float* residual = nullptr;
  uint16_t* wire = nullptr;
  if (!Check(cudaStreamCreate(&stream), "cudaStreamCreate") || !Allocate(&grad, kBytes) ||
      !Allocate(&copy, kBytes) || !Allocate(&residual, kBytes) ||
      !Allocate(&wire, kCount * sizeof(uint16_t))) {
    return 1;
  }
  std::vector<float> host(kCount);
  for (uint64_t i = 0; i < kCount; ++i)
    host[i] = static_cast<float>((i * 2654435761u) % 20011) * 1e-3f - 10.0f;
  cudaMemcpy(grad, host.data(), kBytes, cudaMemcpyHostToDevice);
  cudaMemset(residual, 0, kBytes);

  const double copy_ms = MedianMilliseconds(repetitions, stream, [&] {
    cudaMemcpyAsync(copy, grad, kBytes, cudaMemcpyDeviceToDevice, stream);
  });
  for (WireFormat format : {WireFormat::kFloat16, WireFormat::kBfloat16}) {
    const bool fp16 = format == WireFormat::kFloat16;
    Report(fp16 ? "fp16_encode" : "bf16_encode",
           MedianMilliseconds(
               repetitions, stream,
               [&] { cohort::EnqueueEncode(format, grad, kCount, 0.5f, wire, stream); }),
           copy_ms);
    Report(fp16 ? "fp16_decode" : "bf16_decode",
           MedianMilliseconds(repetitions, stream,
                              [&] { cohort::EnqueueDecode(format, wire, kCount, copy, stream); }),
           copy_ms);
  }
  Report("scale",
         MedianMilliseconds(repetitions, stream,
                            [&] { cohort::EnqueueScale(copy, kCount, 0.5f, stream); }),
         copy_ms);

  // Top-k selects from the whole buffer as one bucket (the scratch for 2^26 entries).
  const uint64_t k = cohort::TopKCount(kCount, 0.01);
  cohort::TopKScratch scratch;
  size_t scratch_bytes = 0;
  uint8_t* scratch_memory = nullptr;
  uint32_t* indices = nullptr;
  float* values = nullptr;
  if (!Check(cohort::TopKScratchBytes(kCount, &scratch_bytes), "TopKScratchBytes") ||
      !Allocate(&scratch_memory, scratch_bytes) ||
      !Check(cohort::TopKScratchAt(scratch_memory, kCount, &scratch), "TopKScratchAt") ||
      !Allocate(&indices, k * 4) || !Allocate(&values, k * 4)) {
    return 1;
  }
  Report("topk_0.01_compress",
         MedianMilliseconds(repetitions, stream,
                            [&] {
                              cohort::EnqueueTopKCompress(grad, kCount, 0.5f, residual, k, scratch,
                                                          indices, values, stream);
                            }),
         copy_ms);
  if (!Check(cudaStreamSynchronize(stream), "the benchmark's kernels")) return 1;
  return 0;
}
