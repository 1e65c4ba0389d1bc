// The element-wise kernels of the CUDA exchange module against the host's arithmetic, bit for
// bit: fp16 and bf16 encode and decode, scale and add (exchange_kernels.h), and the training loop's
// division and non-finite flag (gradient_kernels.h). Every pointer is tried at each offset within a
// 16-byte vector, and lengths around the vector widths, so the scalar head, the vector body and
// the scalar tail all run, and a pair of pointers that cannot be aligned together runs scalar.
// Exits 77 (skipped) where no CUDA device is usable.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/exchange/compression/float_bits.h"
#include "runtime/exchange/cuda/exchange_kernels.h"
#include "runtime/exchange/cuda/gradient_kernels.h"

namespace cohort {
namespace {

constexpr uint64_t kLengths[] = {1, 3, 7, 8, 9, 31, 1000, 65537};
constexpr uint64_t kLongest = 65537;
constexpr uint64_t kSlack = 16;  // elements of room for the offsets

// Values across the float range, negatives, zeros, subnormals of both 16-bit formats, and
// values beyond the largest half.
float Value(uint64_t i) {
  const uint64_t h = (i * 2654435761u + 17) % 1000003u;
  const float sign = (h & 1) != 0 ? -1.0f : 1.0f;
  if (h % 101 == 0) return 0.0f;
  return sign *
         std::ldexp(1.0f + static_cast<float>(h % 8192) / 8192.0f, static_cast<int>(h % 60) - 30);
}

uint32_t Bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

template <class T>
class Device {
 public:
  explicit Device(uint64_t count) { EXPECT_EQ(cudaMalloc(&data_, count * sizeof(T)), cudaSuccess); }
  ~Device() { cudaFree(data_); }
  T* at(uint64_t offset) const { return static_cast<T*>(data_) + offset; }
  void Write(uint64_t offset, const std::vector<T>& values) const {
    ASSERT_EQ(
        cudaMemcpy(at(offset), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice),
        cudaSuccess);
  }
  std::vector<T> Read(uint64_t offset, uint64_t count) const {
    std::vector<T> values(count);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(values.data(), at(offset), count * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }

 private:
  void* data_ = nullptr;
};

std::vector<float> Floats(uint64_t count, uint64_t seed) {
  std::vector<float> values(count);
  for (uint64_t i = 0; i < count; ++i) values[i] = Value(i + seed);
  return values;
}

TEST(CudaKernelsTest, EncodeAndDecodeMatchTheHostAtEveryAlignment) {
  Device<float> floats(kLongest + kSlack);
  Device<uint16_t> words(kLongest + kSlack);
  for (WireFormat format : {WireFormat::kFloat16, WireFormat::kBfloat16}) {
    const bool fp16 = format == WireFormat::kFloat16;
    for (uint64_t count : kLengths) {
      for (uint64_t in_offset = 0; in_offset < 4; ++in_offset) {
        for (uint64_t out_offset : {uint64_t{0}, in_offset, uint64_t{5}}) {
          const std::vector<float> values = Floats(count, in_offset * 7 + count);
          floats.Write(in_offset, values);
          for (float scale : {1.0f, 0.25f}) {
            ASSERT_EQ(EnqueueEncode(format, floats.at(in_offset), count, scale,
                                    words.at(out_offset), nullptr),
                      cudaSuccess);
            const std::vector<uint16_t> encoded = words.Read(out_offset, count);
            std::vector<uint16_t> want(count);
            for (uint64_t i = 0; i < count; ++i) {
              const float scaled = scale == 1.0f ? values[i] : values[i] * scale;
              want[i] = fp16 ? FloatToHalf(scaled) : FloatToBfloat16(scaled);
            }
            ASSERT_EQ(encoded, want) << (fp16 ? "fp16" : "bf16") << " count " << count
                                     << " offsets " << in_offset << "," << out_offset;

            ASSERT_EQ(
                EnqueueDecode(format, words.at(out_offset), count, floats.at(in_offset), nullptr),
                cudaSuccess);
            const std::vector<float> decoded = floats.Read(in_offset, count);
            for (uint64_t i = 0; i < count; ++i) {
              const float back = fp16 ? HalfToFloat(want[i]) : Bfloat16ToFloat(want[i]);
              ASSERT_EQ(Bits(decoded[i]), Bits(back)) << "decode, count " << count << " at " << i;
            }
            floats.Write(in_offset, values);
          }
        }
      }
    }
  }
}

TEST(CudaKernelsTest, ScaleAddAndDivideMatchTheHostAtEveryAlignment) {
  Device<float> a(kLongest + kSlack);
  Device<float> b(kLongest + kSlack);
  for (uint64_t count : kLengths) {
    for (uint64_t a_offset = 0; a_offset < 4; ++a_offset) {
      const std::vector<float> values = Floats(count, a_offset + 3 * count);
      a.Write(a_offset, values);
      ASSERT_EQ(EnqueueScale(a.at(a_offset), count, 0.3f, nullptr), cudaSuccess);
      std::vector<float> scaled = a.Read(a_offset, count);
      for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(Bits(scaled[i]), Bits(values[i] * 0.3f)) << "scale, count " << count;
      }

      for (uint64_t b_offset : {a_offset, (a_offset + 1) % 4}) {
        const std::vector<float> addend = Floats(count, b_offset + 11);
        a.Write(a_offset, values);
        b.Write(b_offset, addend);
        ASSERT_EQ(EnqueueAdd(a.at(a_offset), b.at(b_offset), count, nullptr), cudaSuccess);
        const std::vector<float> sums = a.Read(a_offset, count);
        for (uint64_t i = 0; i < count; ++i) {
          ASSERT_EQ(Bits(sums[i]), Bits(values[i] + addend[i])) << "add, count " << count;
        }
      }

      a.Write(a_offset, values);
      ASSERT_EQ(EnqueueDivide(a.at(a_offset), COHORT_DTYPE_FLOAT32, count, 3, nullptr),
                cudaSuccess);
      const std::vector<float> divided = a.Read(a_offset, count);
      const float third = 1.0f / 3.0f;
      for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(Bits(divided[i]), Bits(values[i] * third)) << "divide, count " << count;
      }
    }
  }
  EXPECT_EQ(EnqueueDivide(a.at(0), COHORT_DTYPE_FLOAT16, 4, 3, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(EnqueueDivide(a.at(0), COHORT_DTYPE_FLOAT32, 4, 0, nullptr), cudaErrorInvalidValue);
}

TEST(CudaKernelsTest, DividesDoubles) {
  Device<double> d(1001);
  std::vector<double> values(1001);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * static_cast<double>(i) - 7.0;
  d.Write(0, values);
  ASSERT_EQ(EnqueueDivide(d.at(0), COHORT_DTYPE_FLOAT64, values.size(), 7, nullptr), cudaSuccess);
  const std::vector<double> divided = d.Read(0, values.size());
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(divided[i], values[i] * (1.0 / 7.0));
}

TEST(CudaKernelsTest, TheFlagRisesForEveryKindOfNonFiniteValueAndOnlyForThem) {
  Device<float> values(kLongest + kSlack);
  Device<uint32_t> flag(1);
  const float kBad[] = {std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()};
  for (uint64_t count : kLengths) {
    for (uint64_t offset = 0; offset < 4; ++offset) {
      std::vector<float> clean = Floats(count, offset);
      clean[0] = std::numeric_limits<float>::max();
      clean[count - 1] = -std::numeric_limits<float>::denorm_min();
      values.Write(offset, clean);
      flag.Write(0, {0});
      ASSERT_EQ(
          EnqueueFlagNonFinite(values.at(offset), COHORT_DTYPE_FLOAT32, count, flag.at(0), nullptr),
          cudaSuccess);
      ASSERT_EQ(flag.Read(0, 1)[0], 0u) << "finite values, count " << count;
      // The first, the last and a middle element: the head, the tail and the body.
      for (uint64_t at : {uint64_t{0}, count / 2, count - 1}) {
        for (float bad : kBad) {
          std::vector<float> dirty = clean;
          dirty[at] = bad;
          values.Write(offset, dirty);
          flag.Write(0, {0});
          ASSERT_EQ(EnqueueFlagNonFinite(values.at(offset), COHORT_DTYPE_FLOAT32, count, flag.at(0),
                                         nullptr),
                    cudaSuccess);
          ASSERT_EQ(flag.Read(0, 1)[0], 1u) << bad << " at " << at << " of " << count;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort
