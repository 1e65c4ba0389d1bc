#include "runtime/exchange/fp16_codec.h"

#include <bit>

namespace cohort {
namespace {

constexpr uint32_t kFloatAbsMask = 0x7fffffffu;
constexpr uint32_t kFloatInf = 0x7f800000u;
constexpr uint32_t kHalfRoundsToInf = 0x477ff000u;  // 65520: halfway from 65504 to 2^16
constexpr uint32_t kHalfMinNormal = 0x38800000u;    // 2^-14
constexpr uint32_t kExponentRebias = (127u - 15u) << 23;

uint16_t FloatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & kFloatAbsMask;
  // Normal halves: rebias the exponent, then round the 13 dropped mantissa bits to nearest even.
  const uint32_t rebiased = magnitude - kExponentRebias;
  const uint32_t normal = (rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13;
  // Subnormal halves: adding 0.5 leaves |value| rounded to a multiple of 2^-24 (the ulp of 0.5,
  // and the half subnormal step) in the low mantissa bits; the addition rounds to nearest even.
  const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
  const uint32_t subnormal = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(0.5f);
  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x03ffu);
  uint32_t half = magnitude < kHalfMinNormal ? subnormal : normal;
  half = magnitude >= kHalfRoundsToInf ? 0x7c00u : half;
  half = magnitude > kFloatInf ? nan : half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t magnitude = half & 0x7fffu;
  const uint32_t exponent = half & 0x7c00u;
  // Normal and special values: move exponent and mantissa into place and rebias; infinity and
  // NaN (exponent all ones) take the float's all-ones exponent instead.
  const uint32_t shifted = magnitude << 13;
  const uint32_t widened = shifted + (exponent == 0x7c00u ? (255u - 31u) << 23 : kExponentRebias);
  // Zero and subnormals: mantissa * 2^-24, exact in float.
  const float tiny = static_cast<float>(static_cast<int32_t>(magnitude)) * 0x1p-24f;
  const uint32_t body = exponent == 0 ? std::bit_cast<uint32_t>(tiny) : widened;
  return std::bit_cast<float>(sign | body);
}

}  // namespace

void Fp16Codec::Encode(const float* in, uint64_t count, void* out) {
  uint16_t* halves = static_cast<uint16_t*>(out);
  for (uint64_t i = 0; i < count; ++i) halves[i] = FloatToHalf(in[i]);
}

void Fp16Codec::Decode(const void* in, uint64_t count, float* out) {
  const uint16_t* halves = static_cast<const uint16_t*>(in);
  for (uint64_t i = 0; i < count; ++i) out[i] = HalfToFloat(halves[i]);
}

}  // namespace cohort
