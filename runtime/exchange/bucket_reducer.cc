#include "runtime/exchange/bucket_reducer.h"

#include "runtime/exchange/compression/compression_form.h"

namespace cohort {

void ScaleInPlace(float* data, uint64_t count, float scale) {
  if (scale == 1.0f) return;
  for (uint64_t i = 0; i < count; ++i) data[i] *= scale;
}

absl::Status CheckCompressionFits(const CompressionOptions& compression,
                                  const std::vector<GradientBucket>& plan) {
  return CompressionFormOf(compression.kind).CheckPlan(compression, plan);
}

absl::StatusOr<std::unique_ptr<BucketReducer>> CreateBucketReducer(
    const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
    const TensorArena& arena, CollectiveBackend& backend) {
  const CompressionForm& form = CompressionFormOf(compression.kind);
  if (absl::Status fits = form.CheckPlan(compression, plan); !fits.ok()) return fits;
  return form.create(compression, plan, arena, backend);
}

}  // namespace cohort
