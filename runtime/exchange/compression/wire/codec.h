// GradientCodec: turns float32 gradients into a smaller wire format and back, for exchanging a
// bucket with fewer bytes (Horovod's and Determined's gradient compression).
//
// Averaging happens before encoding: each rank divides its gradient by the number of ranks, then
// encodes, and the collective sums the decoded values. Dividing first keeps the sum within the
// wire format's range (a float16 sum of N unscaled gradients overflows N times sooner).
//
//   Fp16Codec codec;
//   std::vector<uint8_t> wire(codec.EncodedBytes(count));
//   codec.Encode(grad, count, wire.data());
//   ...  // exchange `wire`
//   codec.Decode(wire.data(), count, grad);
//
// Thread-safety: an implementation may keep scratch state; use one codec per thread.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_H_

#include <cstdint>
#include <string>

namespace cohort {

class GradientCodec {
 public:
  virtual ~GradientCodec() = default;

  // Short lowercase name for logs and configs, e.g. "fp16".
  virtual std::string name() const = 0;

  // Bytes needed to encode `count` float32 values.
  virtual uint64_t EncodedBytes(uint64_t count) const = 0;

  // Writes the encoding of in[0, count) to `out`, which holds EncodedBytes(count) bytes aligned
  // for the codec's wire element (2 bytes for the 16-bit formats). `in` and `out` do not overlap.
  virtual void Encode(const float* in, uint64_t count, void* out) = 0;

  // Writes the `count` values encoded in `in` to out[0, count). `in` and `out` do not overlap.
  virtual void Decode(const void* in, uint64_t count, float* out) = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_H_
