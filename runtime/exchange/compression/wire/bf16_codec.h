// Bf16Codec: float32 gradients as bfloat16 (the top 16 bits of a float32), 2 bytes per value.
//
// Encoding rounds to nearest, ties to even (finite values past bfloat16's largest round to
// infinity, as IEEE rounding does); NaN stays NaN (quiet, sign and top payload bits kept), never
// rounding into infinity. Decoding is exact. Both loops are branch-free so the compiler vectorises
// them.
//
//   Bf16Codec codec;
//   codec.Encode(grad, n, wire);   // wire: n uint16_t
//   codec.Decode(wire, n, grad);
//
// Thread-safety: stateless; one instance may be used from any number of threads.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_BF16_CODEC_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_BF16_CODEC_H_

#include <cstdint>
#include <string>

#include "runtime/exchange/compression/wire/codec.h"

namespace cohort {

class Bf16Codec final : public GradientCodec {
 public:
  std::string name() const override { return "bf16"; }
  uint64_t EncodedBytes(uint64_t count) const override { return 2 * count; }
  void Encode(const float* in, uint64_t count, void* out) override;
  void Decode(const void* in, uint64_t count, float* out) override;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_BF16_CODEC_H_
