#include "runtime/exchange/cuda/cuda_bucket_reducer.h"

#include "absl/strings/str_cat.h"

namespace cohort {

CudaBucketReducer::~CudaBucketReducer() {
  cudaSetDevice(context_.device);
  for (cudaEvent_t event : ready_) cudaEventDestroy(event);
}

absl::Status CudaBucketReducer::CreateEvents(size_t buckets) {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok())
    return s;
  ready_errors_.assign(buckets, absl::OkStatus());
  ready_.reserve(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    cudaEvent_t event = nullptr;
    if (absl::Status s =
            CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
        !s.ok()) {
      return s;
    }
    ready_.push_back(event);
  }
  return absl::OkStatus();
}

void CudaBucketReducer::BucketReady(size_t bucket) {
  absl::Status status = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice");
  if (status.ok()) {
    status = CudaStatus(cudaEventRecord(ready_[bucket], context_.compute),
                        absl::StrCat("marking bucket ", bucket, " ready on the compute stream"));
  }
  ready_errors_[bucket] = status;
}

absl::Status CudaBucketReducer::BeginBucket(size_t bucket) {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok())
    return s;
  if (!ready_errors_[bucket].ok()) return ready_errors_[bucket];
  return CudaStatus(cudaStreamWaitEvent(context_.communication, ready_[bucket], 0),
                    absl::StrCat("waiting for bucket ", bucket, "'s gradients"));
}

absl::Status CudaBucketReducer::EndBucket() {
  return CudaStatus(cudaStreamSynchronize(context_.communication),
                    "finishing a bucket on the communication stream");
}

absl::StatusOr<std::string> CudaBucketReducer::CopyToHost(
    const std::vector<const DeviceBuffer<float>*>& buffers) const {
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  uint64_t floats = 0;
  for (const DeviceBuffer<float>* buffer : buffers) floats += buffer->count();
  std::string state(floats * sizeof(float), '\0');
  char* out = state.data();
  for (const DeviceBuffer<float>* buffer : buffers) {
    if (buffer->count() == 0) continue;
    const uint64_t bytes = buffer->count() * sizeof(float);
    if (absl::Status s = CudaStatus(cudaMemcpy(out, buffer->data(), bytes, cudaMemcpyDeviceToHost),
                                    "copying compression state to the host");
        !s.ok()) {
      return s;
    }
    out += bytes;
  }
  return state;
}

absl::Status CudaBucketReducer::CopyToDevice(absl::string_view state,
                                             const std::vector<DeviceBuffer<float>*>& buffers) {
  uint64_t floats = 0;
  for (const DeviceBuffer<float>* buffer : buffers) floats += buffer->count();
  absl::StatusOr<std::vector<float>> saved = StateFloats(state, floats);
  if (!saved.ok()) return saved.status();
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  const float* in = saved->data();
  for (DeviceBuffer<float>* buffer : buffers) {
    if (buffer->count() == 0) continue;
    if (absl::Status s = CudaStatus(
            cudaMemcpy(buffer->data(), in, buffer->count() * sizeof(float), cudaMemcpyHostToDevice),
            "copying compression state to the device");
        !s.ok()) {
      return s;
    }
    in += buffer->count();
  }
  return CudaStatus(cudaDeviceSynchronize(), "landing the compression state");
}

}  // namespace cohort
