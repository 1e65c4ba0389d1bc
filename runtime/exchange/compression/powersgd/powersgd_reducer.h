// PowerSgdReducer: each bucket's matrices exchanged as rank-r factors (PowerSGD, see
// PowerSgdCompressor), with two float32 allreduces per bucket: every P and the bucket's
// uncompressed tensors (vectors, and matrices too small to gain), then every Q.
//
// For the first `start_iter` optimizer steps buckets are summed exactly (a dense allreduce), as
// PyTorch's PowerSGD hook does, so training gets going before the approximation starts. A tensor
// is a matrix when the plugin registered a shape of two or more dimensions: rows = shape[0], cols
// = the product of the rest. Error feedback and warm-start factors go into checkpoints
// (SaveState).
//
//   PowerSgdReducer reducer(plan, arena, /*rank=*/4, /*start_iter=*/1000, backend);
//   reducer.Reduce(bucket, grad, count, scale, step);
//
// Thread-safety: one thread at a time.
#ifndef COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_REDUCER_H_
#define COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_REDUCER_H_

#include <cstdint>
#include <vector>

#include "runtime/exchange/bucket_reducer.h"
#include "runtime/exchange/compression/powersgd/powersgd_codec.h"

namespace cohort {

// The tensors of `bucket` as PowerSGD sees them (offsets from the bucket's first element): a
// tensor registered with a shape of two or more dimensions is a matrix of shape[0] rows; any other
// is a column (cols == 1).
std::vector<PowerSgdTensor> PowerSgdTensorsOf(const GradientBucket& bucket,
                                              const TensorArena& arena);

class PowerSgdReducer final : public BucketReducer {
 public:
  PowerSgdReducer(const std::vector<GradientBucket>& plan, const TensorArena& arena, uint32_t rank,
                  uint64_t start_iter, CollectiveBackend& backend);
  absl::Status Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                      uint64_t step) override;
  absl::Status Reset() override;
  // Every bucket's starting Q and error, in plan order.
  absl::StatusOr<std::string> SaveState() const override;

 protected:
  absl::Status LoadState(absl::string_view state) override;

 private:
  std::vector<PowerSgdCompressor> compressors_;  // one per bucket
  const uint64_t start_iter_;
  CollectiveBackend& backend_;
  std::vector<float> first_;   // every P, then the uncompressed values
  std::vector<float> second_;  // every Q
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_EXCHANGE_COMPRESSION_POWERSGD_POWERSGD_REDUCER_H_
