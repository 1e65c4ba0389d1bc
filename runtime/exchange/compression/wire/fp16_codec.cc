#include "runtime/exchange/compression/wire/fp16_codec.h"

#include "runtime/exchange/compression/float_bits.h"

namespace cohort {

void Fp16Codec::Encode(const float* in, uint64_t count, void* out) {
  uint16_t* halves = static_cast<uint16_t*>(out);
  for (uint64_t i = 0; i < count; ++i) halves[i] = FloatToHalf(in[i]);
}

void Fp16Codec::Decode(const void* in, uint64_t count, float* out) {
  const uint16_t* halves = static_cast<const uint16_t*>(in);
  for (uint64_t i = 0; i < count; ++i) out[i] = HalfToFloat(halves[i]);
}

}  // namespace cohort
