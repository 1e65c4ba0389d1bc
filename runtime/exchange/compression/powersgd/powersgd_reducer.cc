#include "runtime/exchange/compression/powersgd/powersgd_reducer.h"

#include <functional>
#include <numeric>

namespace cohort {
std::vector<PowerSgdTensor> PowerSgdTensorsOf(const GradientBucket& bucket,
                                              const TensorArena& arena) {
  std::vector<PowerSgdTensor> tensors;
  tensors.reserve(bucket.tensors.size());
  for (size_t t : bucket.tensors) {
    const TensorPlacement& placement = arena.placement(t);
    const std::vector<uint64_t>& shape = arena.spec(t).shape;
    PowerSgdTensor tensor;
    tensor.offset = placement.offset - bucket.offset;
    if (shape.size() >= 2) {
      tensor.rows = shape[0];
      tensor.cols =
          std::accumulate(shape.begin() + 1, shape.end(), uint64_t{1}, std::multiplies<uint64_t>());
    } else {
      tensor.rows = placement.element_count;
      tensor.cols = 1;
    }
    tensors.push_back(tensor);
  }
  return tensors;
}

PowerSgdReducer::PowerSgdReducer(const std::vector<GradientBucket>& plan, const TensorArena& arena,
                                 uint32_t rank, uint64_t start_iter, CollectiveBackend& backend)
    : start_iter_(start_iter), backend_(backend) {
  compressors_.reserve(plan.size());
  for (size_t b = 0; b < plan.size(); ++b) {
    // Every rank seeds bucket b's warm start the same way, so every rank starts from the same Q.
    compressors_.emplace_back(PowerSgdTensorsOf(plan[b], arena), rank, /*seed=*/b);
  }
}

absl::Status PowerSgdReducer::Reset() {
  for (PowerSgdCompressor& powersgd : compressors_) powersgd.Reset();
  return absl::OkStatus();
}

absl::StatusOr<std::string> PowerSgdReducer::SaveState() const {
  std::string state;
  for (const PowerSgdCompressor& powersgd : compressors_) {
    AppendFloats(powersgd.q(), &state);
    AppendFloats(powersgd.error(), &state);
  }
  return state;
}

absl::Status PowerSgdReducer::LoadState(absl::string_view state) {
  uint64_t floats = 0;
  for (const PowerSgdCompressor& powersgd : compressors_) {
    floats += powersgd.q().size() + powersgd.error().size();
  }
  absl::StatusOr<std::vector<float>> saved = StateFloats(state, floats);
  if (!saved.ok()) return saved.status();
  const float* values = saved->data();
  for (PowerSgdCompressor& powersgd : compressors_) {
    const float* error = values + powersgd.q().size();
    powersgd.SetState(values, error);
    values = error + powersgd.error().size();
  }
  return absl::OkStatus();
}

absl::Status PowerSgdReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                     uint64_t step) {
  ScaleInPlace(grad, count, scale);
  if (step < start_iter_) return backend_.AllreduceSum(grad, count, COHORT_DTYPE_FLOAT32);
  PowerSgdCompressor& powersgd = compressors_[bucket];
  first_.resize(powersgd.first_count());
  second_.resize(powersgd.second_count());
  powersgd.ComputeP(grad, first_.data());
  if (absl::Status status =
          backend_.AllreduceSum(first_.data(), first_.size(), COHORT_DTYPE_FLOAT32);
      !status.ok()) {
    return status;
  }
  powersgd.ComputeQ(grad, first_.data(), second_.data());
  // A bucket of vectors only has no Q (the same on every rank: the same plan and shapes).
  if (!second_.empty()) {
    if (absl::Status status =
            backend_.AllreduceSum(second_.data(), second_.size(), COHORT_DTYPE_FLOAT32);
        !status.ok()) {
      return status;
    }
  }
  powersgd.Decompress(first_.data(), second_.data(), grad);
  return absl::OkStatus();
}

}  // namespace cohort
