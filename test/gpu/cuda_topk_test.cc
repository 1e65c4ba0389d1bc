// Top-k selection on the device (EnqueueTopKCompress: radix select, then tiles placed in index
// order) against TopKCompressor on the host, several steps in a row so the residuals carry over:
// the same indices, values and residual bits (NaN's bits aside), for buckets around the tile
// size, k from 1 to the whole bucket, many equal magnitudes, mostly zeros (the threshold is 0),
// and NaN and infinity.
// Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/exchange/compression/topk/topk_codec.h"
#include "runtime/exchange/cuda/topk_kernels.h"

namespace cohort {
namespace {

enum class Values { kSpread, kFewMagnitudes, kMostlyZero, kNonFinite };

struct Case {
  std::string name;
  uint64_t count;
  double ratio;
  Values values;
  float scale;
};

float Value(Values kind, uint64_t i, uint32_t step) {
  const uint64_t h = (i * 2654435761u + step * 40503u + 17) % 1000003u;
  const float sign = (h & 1) != 0 ? -1.0f : 1.0f;
  switch (kind) {
    case Values::kSpread:
      return sign * std::ldexp(1.0f + static_cast<float>(h % 4096) / 4096.0f,
                               static_cast<int>(h % 40) - 20);
    case Values::kFewMagnitudes:
      return sign * static_cast<float>(1 + h % 3) * 0.25f;
    case Values::kMostlyZero:
      return h % 97 == 0 ? sign * static_cast<float>(h % 13) : 0.0f;
    case Values::kNonFinite:
      if (h % 1009 == 0) return std::numeric_limits<float>::quiet_NaN();
      if (h % 1013 == 0) return sign * std::numeric_limits<float>::infinity();
      return sign * static_cast<float>(h % 50);
  }
  return 0;
}

template <class T>
T* DeviceArray(uint64_t count) {
  void* memory = nullptr;
  EXPECT_EQ(cudaMalloc(&memory, std::max<uint64_t>(count, 1) * sizeof(T)), cudaSuccess);
  return static_cast<T*>(memory);
}

template <class T>
std::vector<T> Read(const T* device, uint64_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

// The values' bits, every NaN as one pattern: a NaN made by device arithmetic has the GPU's
// canonical bits (0x7fffffff), one made on the host keeps the x86 ones, and both are NaN.
std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) bits[i] = 0x7fffffffu;
  }
  return bits;
}

class CudaTopKTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaTopKTest, SelectsWhatTheHostSelects) {
  const Case& c = GetParam();
  TopKCompressor host(c.count, c.ratio);
  const uint64_t k = host.k();
  ASSERT_EQ(k, TopKCount(c.count, c.ratio));

  size_t scratch_bytes = 0;
  ASSERT_EQ(TopKScratchBytes(c.count, &scratch_bytes), cudaSuccess);
  uint8_t* scratch_memory = DeviceArray<uint8_t>(scratch_bytes);
  TopKScratch scratch;
  ASSERT_EQ(TopKScratchAt(scratch_memory, c.count, &scratch), cudaSuccess);
  float* grad = DeviceArray<float>(c.count);
  float* residual = DeviceArray<float>(c.count);
  uint32_t* indices = DeviceArray<uint32_t>(k);
  float* values = DeviceArray<float>(k);
  ASSERT_EQ(cudaMemset(residual, 0, c.count * sizeof(float)), cudaSuccess);

  for (uint32_t step = 0; step < 3; ++step) {
    std::vector<float> gradient(c.count);
    std::vector<float> scaled(c.count);
    for (uint64_t i = 0; i < c.count; ++i) {
      gradient[i] = Value(c.values, i, step);
      scaled[i] = c.scale == 1.0f ? gradient[i] : gradient[i] * c.scale;  // rounded once, as there
    }
    ASSERT_EQ(cudaMemcpy(grad, gradient.data(), c.count * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(
        EnqueueTopKCompress(grad, c.count, c.scale, residual, k, scratch, indices, values, nullptr),
        cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

    std::vector<uint32_t> want_indices(k);
    std::vector<float> want_values(k);
    host.Compress(scaled.data(), want_indices.data(), want_values.data());
    EXPECT_EQ(Read(indices, k), want_indices) << c.name << " step " << step;
    EXPECT_EQ(Bits(Read(values, k)), Bits(want_values)) << c.name << " step " << step;
    EXPECT_EQ(Bits(Read(residual, c.count)), Bits(host.residual())) << c.name << " step " << step;
  }
  for (void* memory :
       {static_cast<void*>(scratch_memory), static_cast<void*>(grad), static_cast<void*>(residual),
        static_cast<void*>(indices), static_cast<void*>(values)}) {
    cudaFree(memory);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Buckets, CudaTopKTest,
    ::testing::Values(Case{"one", 1, 0.01, Values::kSpread, 1.0f},
                      Case{"tiny_all", 7, 1.0, Values::kFewMagnitudes, 1.0f},
                      Case{"below_a_tile", 4095, 0.1, Values::kSpread, 0.5f},
                      Case{"a_tile", 4096, 0.01, Values::kFewMagnitudes, 1.0f},
                      Case{"above_a_tile", 4097, 0.3, Values::kFewMagnitudes, 1.0f},
                      Case{"whole_bucket", 10000, 1.0, Values::kSpread, 1.0f},
                      Case{"many_equal", 100003, 0.01, Values::kFewMagnitudes, 0.5f},
                      Case{"threshold_zero", 65537, 0.05, Values::kMostlyZero, 1.0f},
                      Case{"non_finite", 50000, 0.02, Values::kNonFinite, 1.0f},
                      Case{"large", 3000017, 0.001, Values::kSpread, 0.5f}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace cohort
