// DenseReducer: buckets summed as float32 by the engine's allreduce (no compression).
//
//   DenseReducer reducer(backend);
//   reducer.Reduce(bucket, grad, count, scale, step);
//
// Thread-safety: one thread at a time (the backend's rule).
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_NONE_DENSE_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_NONE_DENSE_REDUCER_H_

#include "runtime/exchange/bucket_reducer.h"

namespace cohort {

class DenseReducer final : public BucketReducer {
 public:
  explicit DenseReducer(CollectiveBackend& backend) : backend_(backend) {}
  absl::Status Reduce(size_t /*bucket*/, float* grad, uint64_t count, float scale,
                      uint64_t /*step*/) override {
    ScaleInPlace(grad, count, scale);
    return backend_.AllreduceSum(grad, count, COHORT_DTYPE_FLOAT32);
  }

 private:
  CollectiveBackend& backend_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_NONE_DENSE_REDUCER_H_
