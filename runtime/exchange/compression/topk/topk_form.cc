// `gradient_compression: {type: topk, ratio: R}`: the k largest entries of each bucket, with error
// feedback. Indices are 32 bits, so a bucket of more than 2^32 elements cannot be exchanged.
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/compression/compression_form.h"
#include "runtime/exchange/compression/topk/topk_reducer.h"

namespace cohort {

CompressionForm TopKForm() {
  return {.kind = CompressionOptions::kTopK,
          .create =
              [](const CompressionOptions& options, const std::vector<GradientBucket>& plan,
                 const TensorArena&, CollectiveBackend& backend) {
                return std::unique_ptr<BucketReducer>(
                    new TopKReducer(plan, options.topk_ratio, backend));
              },
          .check_plan = [](const CompressionOptions&,
                           const std::vector<GradientBucket>& plan) -> absl::Status {
            for (const GradientBucket& bucket : plan) {
              if (bucket.count > std::numeric_limits<uint32_t>::max()) {
                return absl::InvalidArgumentError(absl::StrCat(
                    "optimizations.gradient_compression: top-k indexes a bucket with 32 bits, and "
                    "a bucket of ",
                    bucket.count,
                    " elements is larger; lower optimizations.tensor_fusion_threshold or split "
                    "the tensor"));
              }
            }
            return absl::OkStatus();
          }};
}

}  // namespace cohort
