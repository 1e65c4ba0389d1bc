#include "runtime/exchange/bf16_codec.h"

#include <bit>

namespace cohort {
namespace {

uint16_t FloatToBfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

}  // namespace

void Bf16Codec::Encode(const float* in, uint64_t count, void* out) {
  uint16_t* words = static_cast<uint16_t*>(out);
  for (uint64_t i = 0; i < count; ++i) words[i] = FloatToBfloat16(in[i]);
}

void Bf16Codec::Decode(const void* in, uint64_t count, float* out) {
  const uint16_t* words = static_cast<const uint16_t*>(in);
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = std::bit_cast<float>(static_cast<uint32_t>(words[i]) << 16);
  }
}

}  // namespace cohort
