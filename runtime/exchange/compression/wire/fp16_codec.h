// Fp16Codec: float32 gradients as IEEE 754 binary16 (half precision), 2 bytes per value.
//
// Encoding rounds to nearest, ties to even; values below 2^-14 become subnormals (or zero), values
// of magnitude 65520 and up become infinity, infinities stay infinities, and NaN stays NaN (quiet,
// sign and top payload bits kept). Decoding is exact. Both loops are branch-free so the compiler
// vectorises them; the results do not depend on the CPU.
//
//   Fp16Codec codec;
//   codec.Encode(grad, n, wire);   // wire: n uint16_t
//   codec.Decode(wire, n, grad);
//
// Thread-safety: stateless; one instance may be used from any number of threads.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_FP16_CODEC_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_FP16_CODEC_H_

#include <cstdint>
#include <string>

#include "runtime/exchange/compression/wire/codec.h"

namespace cohort {

class Fp16Codec final : public GradientCodec {
 public:
  std::string name() const override { return "fp16"; }
  uint64_t EncodedBytes(uint64_t count) const override { return 2 * count; }
  void Encode(const float* in, uint64_t count, void* out) override;
  void Decode(const void* in, uint64_t count, float* out) override;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_FP16_CODEC_H_
