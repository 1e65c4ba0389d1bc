#include "runtime/exchange/cuda/cuda_topk_reducer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/compression/topk/topk_codec.h"

namespace cohort {
namespace {

// One rank's message: k uint32 indices, then k float32 values.
uint64_t MessageBytes(uint64_t k) { return k * (sizeof(uint32_t) + sizeof(float)); }

}  // namespace

absl::StatusOr<std::unique_ptr<BucketReducer>> CudaTopKReducer::Create(
    CudaContext& context, double ratio, const std::vector<GradientBucket>& plan,
    CollectiveBackend& backend) {
  std::unique_ptr<CudaTopKReducer> reducer(new CudaTopKReducer(context, backend));
  if (absl::Status s = reducer->CreateEvents(plan.size()); !s.ok()) return s;
  uint64_t largest = 0;
  uint64_t largest_message = 0;
  for (const GradientBucket& bucket : plan) {
    if (bucket.count >= uint64_t{std::numeric_limits<int>::max()}) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizations.gradient_compression: top-k on a GPU selects within buckets "
                       "of fewer than 2^31 "
                       "elements, and a bucket of ",
                       bucket.count, " is larger; lower optimizations.tensor_fusion_threshold"));
    }
    const uint64_t k = TopKCount(bucket.count, ratio);
    reducer->ks_.push_back(k);
    reducer->residuals_.emplace_back();
    if (absl::Status s = reducer->residuals_.back().Allocate(bucket.count); !s.ok()) return s;
    if (bucket.count > 0) {
      if (absl::Status s = CudaStatus(
              cudaMemset(reducer->residuals_.back().data(), 0, bucket.count * sizeof(float)),
              "clearing a top-k residual");
          !s.ok()) {
        return s;
      }
    }
    largest = std::max(largest, bucket.count);
    largest_message = std::max(largest_message, MessageBytes(k));
  }
  size_t scratch_bytes = 0;
  if (absl::Status s =
          CudaStatus(TopKScratchBytes(largest, &scratch_bytes), "sizing top-k's scratch");
      !s.ok())
    return s;
  for (absl::Status s : {reducer->scratch_memory_.Allocate(scratch_bytes),
                         reducer->gathered_.Allocate(largest_message * backend.size())}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s =
          CudaStatus(TopKScratchAt(reducer->scratch_memory_.data(), largest, &reducer->scratch_),
                     "placing top-k's scratch");
      !s.ok())
    return s;
  return std::unique_ptr<BucketReducer>(std::move(reducer));
}

absl::Status CudaTopKReducer::Reset() {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  for (const DeviceBuffer<float>& residual : residuals_) {
    if (residual.count() == 0) continue;
    if (absl::Status s =
            CudaStatus(cudaMemset(residual.data(), 0, residual.count() * sizeof(float)),
                       "clearing a top-k residual");
        !s.ok()) {
      return s;
    }
  }
  // cudaMemset runs on the default stream, which the exchange's streams do not wait for.
  return CudaStatus(cudaDeviceSynchronize(), "clearing the top-k residuals");
}

absl::StatusOr<std::string> CudaTopKReducer::SaveState() const {
  std::vector<const DeviceBuffer<float>*> buffers;
  for (const DeviceBuffer<float>& residual : residuals_) buffers.push_back(&residual);
  return CopyToHost(buffers);
}

absl::Status CudaTopKReducer::LoadState(absl::string_view state) {
  std::vector<DeviceBuffer<float>*> buffers;
  for (DeviceBuffer<float>& residual : residuals_) buffers.push_back(&residual);
  return CopyToDevice(state, buffers);
}

absl::Status CudaTopKReducer::Reduce(size_t bucket, float* grad, uint64_t count, float scale,
                                     uint64_t /*step*/) {
  if (count != residuals_[bucket].count()) {
    return absl::InternalError(absl::StrCat("top-k: bucket ", bucket, " has ", count,
                                            " elements, planned ", residuals_[bucket].count()));
  }
  if (absl::Status s = BeginBucket(bucket); !s.ok()) return s;
  const uint64_t k = ks_[bucket];
  if (k == 0) return EndBucket();
  cudaStream_t stream = context_.communication;
  const uint64_t bytes = MessageBytes(k);
  uint8_t* own = gathered_.data() + bytes * backend_.rank();
  auto* own_indices = reinterpret_cast<uint32_t*>(own);
  auto* own_values = reinterpret_cast<float*>(own + k * sizeof(uint32_t));
  if (absl::Status s = CudaStatus(EnqueueTopKCompress(grad, count, scale, residuals_[bucket].data(),
                                                      k, scratch_, own_indices, own_values, stream),
                                  "selecting the top-k entries");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = backend_.Allgather(own, bytes, gathered_.data()); !s.ok()) return s;
  if (absl::Status s =
          CudaStatus(cudaMemsetAsync(grad, 0, count * sizeof(float), stream), "clearing a bucket");
      !s.ok()) {
    return s;
  }
  for (uint32_t rank = 0; rank < backend_.size(); ++rank) {
    const uint8_t* message = gathered_.data() + bytes * rank;
    if (absl::Status s = CudaStatus(
            EnqueueScatterAdd(reinterpret_cast<const uint32_t*>(message),
                              reinterpret_cast<const float*>(message + k * sizeof(uint32_t)), k,
                              grad, stream),
            "adding the gathered top-k entries");
        !s.ok()) {
      return s;
    }
  }
  return EndBucket();
}

}  // namespace cohort
