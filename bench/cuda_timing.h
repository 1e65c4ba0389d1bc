// What the CUDA benchmarks share: checked allocation and the median CUDA-event time of a piece of
// work enqueued on a stream.
#ifndef COHORT_BENCH_CUDA_TIMING_H_
#define COHORT_BENCH_CUDA_TIMING_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace cohort::bench {

// True on cudaSuccess; otherwise prints "<program>: <what>: <CUDA's message>".
inline bool Check(cudaError_t error, const char* what, const char* program = "bench") {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s: %s\n", program, what, cudaGetErrorString(error));
  return false;
}

// cudaMalloc for any element type (the C API takes void**).
template <typename T>
bool Allocate(T** pointer, uint64_t bytes) {
  void* memory = nullptr;
  if (!Check(cudaMalloc(&memory, bytes), "cudaMalloc")) return false;
  *pointer = static_cast<T*>(memory);
  return true;
}

// True when CUDA device 0 is usable, after printing "<program>: <device name>" to stderr;
// otherwise prints why not (the caller exits 77, skipped).
inline bool OpenFirstDevice(const char* program) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "%s: no usable CUDA device\n", program);
    return false;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  std::fprintf(stderr, "%s: %s\n", program, properties.name);
  return true;
}

// Median milliseconds of `repetitions` runs of `enqueue` on `stream`, after one warm-up.
inline double MedianMilliseconds(int repetitions, cudaStream_t stream,
                                 const std::function<void()>& enqueue) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  enqueue();
  cudaStreamSynchronize(stream);
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    cudaEventRecord(start, stream);
    enqueue();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// One JSON line of a benchmark measured against cudaMemcpy: {"name", "value", "unit": "GB/s",
// "peer": "cudaMemcpy", "peer_value", "ratio"}.
inline void ReportAgainstCopy(const char* name, double gigabytes_per_second,
                              double copy_gigabytes_per_second) {
  std::printf(
      "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"GB/s\", \"peer\": \"cudaMemcpy\", "
      "\"peer_value\": %.3f, \"ratio\": %.4f}\n",
      name, gigabytes_per_second, copy_gigabytes_per_second,
      gigabytes_per_second / copy_gigabytes_per_second);
}

}  // namespace cohort::bench

#endif  // COHORT_BENCH_CUDA_TIMING_H_
