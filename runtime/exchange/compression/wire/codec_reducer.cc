#include "runtime/exchange/compression/wire/codec_reducer.h"

#include <algorithm>
#include <utility>

namespace cohort {

CodecReducer::CodecReducer(std::unique_ptr<GradientCodec> codec, bool engine_sums_wire,
                           CollectiveBackend& backend)
    : codec_(std::move(codec)), engine_sums_wire_(engine_sums_wire), backend_(backend) {}

absl::Status CodecReducer::Reduce(size_t /*bucket*/, float* grad, uint64_t count, float scale,
                                  uint64_t /*step*/) {
  ScaleInPlace(grad, count, scale);
  return engine_sums_wire_ ? SumByEngine(grad, count) : GatherAndSum(grad, count);
}

absl::Status CodecReducer::SumByEngine(float* grad, uint64_t count) {
  encoded_.resize(codec_->EncodedBytes(count));
  codec_->Encode(grad, count, encoded_.data());
  if (absl::Status status = backend_.AllreduceSum(encoded_.data(), count, COHORT_DTYPE_FLOAT16);
      !status.ok()) {
    return status;
  }
  codec_->Decode(encoded_.data(), count, grad);
  return absl::OkStatus();
}

absl::Status CodecReducer::GatherAndSum(float* grad, uint64_t count) {
  const uint64_t bytes = codec_->EncodedBytes(count);
  const uint32_t size = backend_.size();
  encoded_.resize(bytes * size);
  char* own = encoded_.data() + bytes * backend_.rank();
  codec_->Encode(grad, count, own);
  if (absl::Status status = backend_.Allgather(own, bytes, encoded_.data()); !status.ok()) {
    return status;
  }
  decoded_.resize(count);
  std::fill(grad, grad + count, 0.0f);
  for (uint32_t rank = 0; rank < size; ++rank) {
    codec_->Decode(encoded_.data() + bytes * rank, count, decoded_.data());
    for (uint64_t i = 0; i < count; ++i) grad[i] += decoded_[i];
  }
  return absl::OkStatus();
}

}  // namespace cohort
