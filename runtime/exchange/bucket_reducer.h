// BucketReducer: how one bucket of float32 gradients is summed over the ranks, after the exchange
// has scaled it (averaging divides before the sum; see codec.h). One implementation per form of
// `optimizations.gradient_compression`:
//
//   none      DenseReducer     float32 allreduce
//   fp16      CodecReducer     encoded to fp16, summed by the engine, decoded
//   bf16      CodecReducer     encoded to bf16, gathered, summed in float32 in rank order
//   topk      TopKReducer      k largest entries (with error feedback), gathered and added up
//   powersgd  PowerSgdReducer  rank-r power iteration (error feedback, warm start), two allreduces
//
//   absl::StatusOr<std::unique_ptr<BucketReducer>> reducer =
//       CreateBucketReducer(options.compression, plan, arena, backend);
//   (*reducer)->Reduce(bucket_index, grad_slice, bucket.count, step);
//
// Every rank reduces the same buckets in the same order with the same arguments, so every rank
// issues the same collectives; and every rank ends with the same bits (sums are taken in a fixed
// order, or by the engine, whose result is the same on every rank).
//
// Thread-safety: one thread at a time (it uses the backend and keeps scratch and per-bucket state).
#ifndef COHORT_RUNTIME_EXCHANGE_BUCKET_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_BUCKET_REDUCER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/exchange/bucket_plan.h"
#include "runtime/exchange/codec_options.h"

namespace cohort {

class BucketReducer {
 public:
  virtual ~BucketReducer() = default;

  // Replaces grad[0, count), the slice of plan bucket `bucket`, with its sum over the ranks (or,
  // for the lossy forms, the compressed estimate of that sum). `step` is the number of optimizer
  // steps taken before this one. After an error the slice and the group are unusable.
  virtual absl::Status Reduce(size_t bucket, float* grad, uint64_t count, uint64_t step) = 0;
};

// The reducer for `compression` over `plan` (a plan of `arena`). The arena and the backend must
// outlive it.
absl::StatusOr<std::unique_ptr<BucketReducer>> CreateBucketReducer(
    const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
    const TensorArena& arena, CollectiveBackend& backend);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_BUCKET_REDUCER_H_
