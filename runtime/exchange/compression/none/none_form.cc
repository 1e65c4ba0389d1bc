// `gradient_compression: none`: float32 buckets summed by the engine.
#include "runtime/exchange/compression/compression_form.h"
#include "runtime/exchange/compression/none/dense_reducer.h"

namespace cohort {

CompressionForm NoneForm() {
  return {.kind = CompressionOptions::kNone,
          .create = [](const CompressionOptions&, const std::vector<GradientBucket>&,
                       const TensorArena&, CollectiveBackend& backend) {
            return std::unique_ptr<BucketReducer>(new DenseReducer(backend));
          }};
}

}  // namespace cohort
