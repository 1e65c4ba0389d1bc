#include "runtime/exchange/cuda/cuda_wire_reducer.h"

#include <algorithm>

namespace cohort {

absl::StatusOr<std::unique_ptr<BucketReducer>> CudaWireReducer::Create(
    CudaContext& context, std::optional<WireFormat> format, const std::vector<GradientBucket>& plan,
    CollectiveBackend& backend) {
  std::unique_ptr<CudaWireReducer> reducer(new CudaWireReducer(context, format, backend));
  if (absl::Status s = reducer->CreateEvents(plan.size()); !s.ok()) return s;
  if (format) {
    uint64_t largest = 0;
    for (const GradientBucket& bucket : plan) largest = std::max(largest, bucket.count);
    if (absl::Status s = reducer->wire_.Allocate(largest); !s.ok()) return s;
  }
  return std::unique_ptr<BucketReducer>(std::move(reducer));
}

absl::Status CudaWireReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                     uint64_t /*step*/) {
  if (absl::Status s = BeginBucket(bucket); !s.ok()) return s;
  cudaStream_t stream = context_.communication;
  if (!format_) {
    if (absl::Status s = CudaStatus(EnqueueScale(grad, count, scale, stream), "scaling a bucket");
        !s.ok())
      return s;
    if (absl::Status s = backend_.AllreduceSum(grad, count, COHORT_DTYPE_FLOAT32); !s.ok())
      return s;
    return EndBucket();
  }
  if (absl::Status s = CudaStatus(EnqueueEncode(*format_, grad, count, scale, wire_.data(), stream),
                                  "encoding a bucket");
      !s.ok()) {
    return s;
  }
  const cohort_dtype wire_dtype =
      *format_ == WireFormat::kFloat16 ? COHORT_DTYPE_FLOAT16 : COHORT_DTYPE_BFLOAT16;
  if (absl::Status s = backend_.AllreduceSum(wire_.data(), count, wire_dtype); !s.ok()) return s;
  if (absl::Status s = CudaStatus(EnqueueDecode(*format_, wire_.data(), count, grad, stream),
                                  "decoding a bucket");
      !s.ok()) {
    return s;
  }
  return EndBucket();
}

}  // namespace cohort
