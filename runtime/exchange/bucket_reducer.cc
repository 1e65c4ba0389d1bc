#include "runtime/exchange/bucket_reducer.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/compression/powersgd/powersgd_reducer.h"
#include "runtime/exchange/compression/topk/topk_reducer.h"
#include "runtime/exchange/compression/wire/bf16_codec.h"
#include "runtime/exchange/compression/wire/codec_reducer.h"
#include "runtime/exchange/compression/wire/fp16_codec.h"
#include "runtime/exchange/dense_reducer.h"

namespace cohort {

void ScaleInPlace(float* data, uint64_t count, float scale) {
  if (scale == 1.0f) return;
  for (uint64_t i = 0; i < count; ++i) data[i] *= scale;
}

absl::Status CheckCompressionFits(const CompressionOptions& compression,
                                  const std::vector<GradientBucket>& plan) {
  if (compression.kind != CompressionOptions::kTopK) return absl::OkStatus();
  for (const GradientBucket& bucket : plan) {
    if (bucket.count > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "optimizations.gradient_compression: top-k indexes a bucket with 32 bits, and a "
          "bucket of ",
          bucket.count,
          " elements is larger; lower "
          "optimizations.tensor_fusion_threshold or split the tensor"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BucketReducer>> CreateBucketReducer(
    const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
    const TensorArena& arena, CollectiveBackend& backend) {
  if (absl::Status fits = CheckCompressionFits(compression, plan); !fits.ok()) return fits;
  switch (compression.kind) {
    case CompressionOptions::kNone:
      return std::unique_ptr<BucketReducer>(new DenseReducer(backend));
    case CompressionOptions::kFp16:
      return std::unique_ptr<BucketReducer>(
          new CodecReducer(std::make_unique<Fp16Codec>(), /*engine_sums_wire=*/true, backend));
    case CompressionOptions::kBf16:
      return std::unique_ptr<BucketReducer>(
          new CodecReducer(std::make_unique<Bf16Codec>(), /*engine_sums_wire=*/false, backend));
    case CompressionOptions::kTopK:
      return std::unique_ptr<BucketReducer>(new TopKReducer(plan, compression.topk_ratio, backend));
    case CompressionOptions::kPowerSgd:
      return std::unique_ptr<BucketReducer>(new PowerSgdReducer(
          plan, arena, compression.powersgd_rank, compression.powersgd_start_iter, backend));
  }
  return absl::InternalError(
      absl::StrCat("unknown gradient compression kind ", static_cast<int>(compression.kind)));
}

}  // namespace cohort
