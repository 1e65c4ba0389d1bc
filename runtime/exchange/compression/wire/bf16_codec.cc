#include "runtime/exchange/compression/wire/bf16_codec.h"

#include "runtime/exchange/compression/float_bits.h"

namespace cohort {

void Bf16Codec::Encode(const float* in, uint64_t count, void* out) {
  uint16_t* words = static_cast<uint16_t*>(out);
  for (uint64_t i = 0; i < count; ++i) words[i] = FloatToBfloat16(in[i]);
}

void Bf16Codec::Decode(const void* in, uint64_t count, float* out) {
  const uint16_t* words = static_cast<const uint16_t*>(in);
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = Bfloat16ToFloat(words[i]);
  }
}

}  // namespace cohort
