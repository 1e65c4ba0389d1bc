// TopKReducer: each bucket sends only its k largest-magnitude entries, with error feedback (see
// TopKCompressor). Every rank's (index, value) pairs are gathered; every rank then zeroes its slice
// and adds the pairs of rank 0, 1, ... in that order, so every rank ends with the same bits.
//
// One rank's message is k uint32 indices followed by k float32 values (8k bytes), against 4n for
// the dense sum: with ratio 0.01 that is 2% of the bytes per rank, gathered from every rank.
//
//   TopKReducer reducer(plan, /*ratio=*/0.01, backend);
//   reducer.Reduce(bucket, grad, count, scale, step);
//
// What was not sent stays in the bucket's residual and is added to the next step's gradient; a
// checkpoint keeps every rank's residuals (SaveState).
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_REDUCER_H_

#include <cstdint>
#include <vector>

#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/compression/topk/topk_codec.h"

namespace cohort {

class TopKReducer final : public BucketReducer {
 public:
  // One compressor (and residual) per bucket of `plan`. Each bucket must hold at most 2^32
  // elements (indices are uint32; PlanBuckets' callers check).
  TopKReducer(const std::vector<GradientBucket>& plan, double ratio, CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;
  absl::Status Reset() override;
  // Every bucket's residual, in plan order.
  absl::StatusOr<std::string> SaveState() const override;

 protected:
  absl::Status LoadState(absl::string_view state) override;

 private:
  std::vector<TopKCompressor> compressors_;
  CollectiveBackend& backend_;
  std::vector<char> gathered_;  // size() messages of 8k bytes each
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_TOPK_TOPK_REDUCER_H_
