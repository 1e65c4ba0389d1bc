// `gradient_compression: {type: powersgd, rank: N, start_iter: S}`: a rank-N power iteration per
// bucket, exact for the first S iterations. It reads the arena for its tensors' shapes.
#include "runtime/exchange/compression/compression_form.h"
#include "runtime/exchange/compression/powersgd/powersgd_reducer.h"

namespace cohort {

CompressionForm PowerSgdForm() {
  return {.kind = CompressionOptions::kPowerSgd,
          .create = [](const CompressionOptions& options, const std::vector<GradientBucket>& plan,
                       const TensorArena& arena, CollectiveBackend& backend) {
            return std::unique_ptr<BucketReducer>(new PowerSgdReducer(
                plan, arena, options.powersgd_rank, options.powersgd_start_iter, backend));
          }};
}

}  // namespace cohort
