// Element conversions shared by the CPU codecs and the CUDA kernels of the exchange, written once
// so both sides produce the same bits: float32 to IEEE float16 and bfloat16 (round to nearest
// even, NaN kept a quiet NaN), back to float32, and the magnitude key top-k orders entries by.
//
//   uint16_t half = FloatToHalf(x);          // on the host, or in a __device__ function
//   float back = HalfToFloat(half);
//
// Every function is branch-free (selects, no data-dependent branches), so loops over them
// vectorize on the CPU and do not diverge on the GPU. Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_FLOAT_BITS_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_FLOAT_BITS_H_

#include <cstdint>

#if defined(__CUDACC__)
#define COHORT_HOST_DEVICE __host__ __device__
#else
#define COHORT_HOST_DEVICE
#endif

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

namespace cohort {

COHORT_HOST_DEVICE inline uint32_t BitsOf(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  return std::bit_cast<uint32_t>(value);
#endif
}

COHORT_HOST_DEVICE inline float FloatOf(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// float32's exponent bias (127) minus binary16's (15), in the float's exponent field.
inline constexpr uint32_t kHalfExponentRebias = (127u - 15u) << 23;

// IEEE binary16, rounded to nearest even; beyond the largest half (65504) rounds to infinity.
COHORT_HOST_DEVICE inline uint16_t FloatToHalf(float value) {
  constexpr uint32_t kFloatAbsMask = 0x7fffffffu;
  constexpr uint32_t kFloatInf = 0x7f800000u;
  constexpr uint32_t kHalfRoundsToInf = 0x477ff000u;  // 65520: halfway from 65504 to 2^16
  constexpr uint32_t kHalfMinNormal = 0x38800000u;    // 2^-14
  const uint32_t bits = BitsOf(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & kFloatAbsMask;
  // Normal halves: rebias the exponent, then round the 13 dropped mantissa bits to nearest even.
  const uint32_t rebiased = magnitude - kHalfExponentRebias;
  const uint32_t normal = (rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13;
  // Subnormal halves: adding 0.5 leaves |value| rounded to a multiple of 2^-24 (the ulp of 0.5,
  // and the half subnormal step) in the low mantissa bits; the addition rounds to nearest even.
  const float shifted = FloatOf(magnitude) + 0.5f;
  const uint32_t subnormal = BitsOf(shifted) - BitsOf(0.5f);
  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x03ffu);
  uint32_t half = magnitude < kHalfMinNormal ? subnormal : normal;
  half = magnitude >= kHalfRoundsToInf ? 0x7c00u : half;
  half = magnitude > kFloatInf ? nan : half;
  return static_cast<uint16_t>(sign | half);
}

// Exact: every half is a float.
COHORT_HOST_DEVICE inline float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t magnitude = half & 0x7fffu;
  const uint32_t exponent = half & 0x7c00u;
  // Normal and special values: move exponent and mantissa into place and rebias; infinity and
  // NaN (exponent all ones) take the float's all-ones exponent instead.
  const uint32_t shifted = magnitude << 13;
  const uint32_t widened =
      shifted + (exponent == 0x7c00u ? (255u - 31u) << 23 : kHalfExponentRebias);
  // Zero and subnormals: mantissa * 2^-24, exact in float.
  const float tiny = static_cast<float>(static_cast<int32_t>(magnitude)) * 0x1p-24f;
  const uint32_t body = exponent == 0 ? BitsOf(tiny) : widened;
  return FloatOf(sign | body);
}

// bfloat16 (the top 16 bits of a float32), rounded to nearest even.
COHORT_HOST_DEVICE inline uint16_t FloatToBfloat16(float value) {
  const uint32_t bits = BitsOf(value);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

COHORT_HOST_DEVICE inline float Bfloat16ToFloat(uint16_t word) {
  return FloatOf(static_cast<uint32_t>(word) << 16);
}

// The bits of |value|: as unsigned integers they order like the magnitudes, with NaN above
// infinity, and the order is total (no NaN comparisons in a selection).
COHORT_HOST_DEVICE inline uint32_t MagnitudeKey(float value) { return BitsOf(value) & 0x7fffffffu; }

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_FLOAT_BITS_H_
