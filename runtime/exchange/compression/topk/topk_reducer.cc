#include "runtime/exchange/compression/topk/topk_reducer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cohort {

TopKReducer::TopKReducer(const std::vector<GradientBucket>& plan, double ratio,
                         CollectiveBackend& backend)
    : backend_(backend) {
  compressors_.reserve(plan.size());
  for (const GradientBucket& bucket : plan) compressors_.emplace_back(bucket.count, ratio);
}

absl::Status TopKReducer::Reset() {
  for (TopKCompressor& topk : compressors_) topk.ClearResidual();
  return absl::OkStatus();
}

absl::StatusOr<std::string> TopKReducer::SaveState() const {
  std::string state;
  for (const TopKCompressor& topk : compressors_) AppendFloats(topk.residual(), &state);
  return state;
}

absl::Status TopKReducer::LoadState(absl::string_view state) {
  uint64_t floats = 0;
  for (const TopKCompressor& topk : compressors_) floats += topk.count();
  absl::StatusOr<std::vector<float>> saved = StateFloats(state, floats);
  if (!saved.ok()) return saved.status();
  const float* values = saved->data();
  for (TopKCompressor& topk : compressors_) {
    topk.SetResidual(values);
    values += topk.count();
  }
  return absl::OkStatus();
}

absl::Status TopKReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                 uint64_t /*step*/) {
  TopKCompressor& topk = compressors_[bucket];
  if (topk.count() != count) {
    return absl::InternalError(absl::StrCat("top-k: bucket ", bucket, " has ", count,
                                            " elements, planned ", topk.count()));
  }
  ScaleInPlace(grad, count, scale);
  const uint64_t k = topk.k();
  const uint64_t bytes = topk.EncodedBytes();
  gathered_.resize(bytes * backend_.size());
  char* own = gathered_.data() + bytes * backend_.rank();
  topk.Compress(grad, reinterpret_cast<uint32_t*>(own),
                reinterpret_cast<float*>(own + k * sizeof(uint32_t)));
  if (absl::Status status = backend_.Allgather(own, bytes, gathered_.data()); !status.ok()) {
    return status;
  }
  std::fill(grad, grad + count, 0.0f);
  for (uint32_t rank = 0; rank < backend_.size(); ++rank) {
    const char* message = gathered_.data() + bytes * rank;
    TopKCompressor::Accumulate(reinterpret_cast<const uint32_t*>(message),
                               reinterpret_cast<const float*>(message + k * sizeof(uint32_t)), k,
                               grad);
  }
  return absl::OkStatus();
}

}  // namespace cohort
