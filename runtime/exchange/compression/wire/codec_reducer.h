// CodecReducer: buckets exchanged in a 16-bit wire format (fp16 or bf16, see codec.h).
//
// fp16: each rank encodes its (already scaled) slice, the engine sums the half-precision values
// (Gloo adds fp16 itself), and the sum is decoded back into the slice.
// bf16: no CPU engine adds bf16, so every rank gathers every rank's encoded slice and adds them up
// in float32 in rank order (the same order, hence the same bits, on every rank).
//
//   CodecReducer reducer(std::make_unique<Fp16Codec>(), /*engine_sums_wire=*/true, backend);
//
// Thread-safety: one thread at a time (it keeps scratch buffers).
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_REDUCER_H_

#include <memory>
#include <vector>

#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/compression/wire/codec.h"

namespace cohort {

class CodecReducer final : public BucketReducer {
 public:
  // `engine_sums_wire`: the backend can AllreduceSum the codec's wire dtype (fp16 on Gloo);
  // otherwise the encoded slices are gathered and summed after decoding.
  CodecReducer(std::unique_ptr<GradientCodec> codec, bool engine_sums_wire,
               CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;

 private:
  absl::Status SumByEngine(float* grad, uint64_t count);
  absl::Status GatherAndSum(float* grad, uint64_t count);

  std::unique_ptr<GradientCodec> codec_;
  const bool engine_sums_wire_;
  CollectiveBackend& backend_;
  std::vector<char> encoded_;
  std::vector<float> decoded_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_WIRE_CODEC_REDUCER_H_
