// `gradient_compression: fp16` and `bf16`: buckets sent in a 16-bit format. The engine sums fp16
// itself; bf16 is gathered and summed in float32 in rank order (codec_reducer.h).
#include "runtime/exchange/compression/compression_form.h"
#include "runtime/exchange/compression/wire/bf16_codec.h"
#include "runtime/exchange/compression/wire/codec_reducer.h"
#include "runtime/exchange/compression/wire/fp16_codec.h"

namespace cohort {

CompressionForm Fp16Form() {
  return {.kind = CompressionOptions::kFp16,
          .create = [](const CompressionOptions&, const std::vector<GradientBucket>&,
                       const TensorArena&, CollectiveBackend& backend) {
            return std::unique_ptr<BucketReducer>(new CodecReducer(
                std::make_unique<Fp16Codec>(), /*engine_sums_wire=*/true, backend));
          }};
}

CompressionForm Bf16Form() {
  return {.kind = CompressionOptions::kBf16,
          .create = [](const CompressionOptions&, const std::vector<GradientBucket>&,
                       const TensorArena&, CollectiveBackend& backend) {
            return std::unique_ptr<BucketReducer>(new CodecReducer(
                std::make_unique<Bf16Codec>(), /*engine_sums_wire=*/false, backend));
          }};
}

}  // namespace cohort
