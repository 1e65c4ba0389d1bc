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
//   (*reducer)->Reduce(bucket_index, grad_slice, bucket.count, /*scale=*/0.5f, step);
//
// Gradients live where the arena put them: host memory for the reducers here, device memory for
// the CUDA ones (see device_exchange.h), which run on the exchange's communication stream.
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
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/arena/tensor_arena.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/config/compression_options.h"
#include "runtime/exchange/bucket_plan.h"

namespace cohort {

class BucketReducer {
 public:
  virtual ~BucketReducer() = default;

  // Replaces grad[0, count), the slice of plan bucket `bucket`, with the sum over the ranks of
  // each rank's slice multiplied by `scale` (or, for the lossy forms, the compressed estimate of
  // that sum); scaling comes first, so averaging divides before the sum. `step` is the number of
  // optimizer steps taken before this one. Returns once the slice holds the result. After an error
  // the slice and the group are unusable.
  virtual absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                              uint64_t step) = 0;

  // Called on the thread that drives the model when the plugin has reported every gradient of
  // `bucket`, before the bucket is handed to whichever thread reduces it. A device reducer marks
  // the point in the plugin's stream its Reduce must wait for; the host reducers need nothing.
  virtual void BucketReady(size_t /*bucket*/) {}

  // Forgets what is kept between steps (error-feedback residuals, warm-start factors), as if no
  // step had been reduced. Every rank calls it at the same point. Stateless forms do nothing.
  virtual absl::Status Reset() { return absl::OkStatus(); }

  // What is kept between steps, as bytes for a checkpoint: this rank's residuals and factors,
  // float32 in plan order (copied from the device for the CUDA reducers). Empty for the
  // stateless forms. Call between steps.
  virtual absl::StatusOr<std::string> SaveState() const { return std::string(); }

  // Takes back what SaveState returned on a reducer of the same form and plan, at the same rank;
  // empty bytes mean Reset. FAILED_PRECONDITION for bytes of another size (naming both), and
  // for state this reducer does not keep.
  absl::Status RestoreState(absl::string_view state) {
    return state.empty() ? Reset() : LoadState(state);
  }

 protected:
  // RestoreState of non-empty bytes. The default refuses them: the stateless forms keep none.
  virtual absl::Status LoadState(absl::string_view state);
};

// data[i] *= scale for i in [0, count), skipped when scale is 1 (host memory).
void ScaleInPlace(float* data, uint64_t count, float scale);

// For SaveState and LoadState: appends `values` to `state` as float32, and reads `floats` of them
// back from `state` (FAILED_PRECONDITION naming both sizes when it holds another number).
void AppendFloats(const std::vector<float>& values, std::string* state);
absl::StatusOr<std::vector<float>> StateFloats(absl::string_view state, uint64_t floats);

// INVALID_ARGUMENT when `compression` cannot exchange `plan` (top-k: a bucket over 2^32 elements);
// the form's CheckPlan (compression/compression_form.h).
absl::Status CheckCompressionFits(const CompressionOptions& compression,
                                  const std::vector<GradientBucket>& plan);

// The host-memory reducer for `compression` over `plan` (a plan of `arena`), made by the form's
// entry (compression/compression_form.h) once CheckCompressionFits accepts the plan. The arena and
// the backend must outlive it.
absl::StatusOr<std::unique_ptr<BucketReducer>> CreateBucketReducer(
    const CompressionOptions& compression, const std::vector<GradientBucket>& plan,
    const TensorArena& arena, CollectiveBackend& backend);

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_BUCKET_REDUCER_H_
