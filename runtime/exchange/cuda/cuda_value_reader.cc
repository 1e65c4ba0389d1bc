#include "runtime/exchange/cuda/cuda_value_reader.h"

#include <algorithm>
#include <cstring>

namespace cohort {

CudaValueReader::~CudaValueReader() {
  cudaSetDevice(context_.device);
  cudaStreamSynchronize(context_.compute);  // no copy into a chunk is still under way
  cudaFreeHost(pinned_);
}

absl::StatusOr<uint32_t> CudaValueReader::Capture(const void* device_value, cohort_dtype dtype) {
  if (dtype != COHORT_DTYPE_FLOAT32 && dtype != COHORT_DTYPE_FLOAT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a device value must be float32 or float64, not dtype ", static_cast<int>(dtype)));
  }
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  const uint64_t slot = dtypes_.size();
  if (slot / kChunkSlots >= chunks_.size()) {
    DeviceBuffer<uint64_t> chunk;
    if (absl::Status s = chunk.Allocate(kChunkSlots); !s.ok()) return s;
    chunks_.push_back(std::move(chunk));
  }
  if (noted_.count == ValueCopies::kMax) {
    if (absl::Status s = EnqueueCopies(); !s.ok()) return s;
  }
  noted_.from[noted_.count] = device_value;
  noted_.to[noted_.count] = chunks_[slot / kChunkSlots].data() + slot % kChunkSlots;
  noted_.bytes[noted_.count] = dtype == COHORT_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double);
  ++noted_.count;
  dtypes_.push_back(dtype);
  return static_cast<uint32_t>(slot);
}

absl::Status CudaValueReader::EnqueueCopies() {
  if (noted_.count == 0) return absl::OkStatus();
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  absl::Status enqueued = CudaStatus(EnqueueCopyValues(noted_, context_.compute),
                                     "copying metric values on the device");
  noted_.count = 0;
  return enqueued;
}

absl::StatusOr<std::vector<double>> CudaValueReader::TakeAll() {
  if (absl::Status s = EnqueueCopies(); !s.ok()) return s;
  const uint64_t slots = dtypes_.size();
  std::vector<double> values(slots);
  if (slots == 0) return values;
  if (absl::Status s = CudaStatus(cudaSetDevice(context_.device), "cudaSetDevice"); !s.ok()) {
    return s;
  }
  if (pinned_slots_ < slots) {
    cudaFreeHost(pinned_);
    pinned_ = nullptr;
    pinned_slots_ = 0;
    void* memory = nullptr;
    const uint64_t capacity = (slots + kChunkSlots - 1) / kChunkSlots * kChunkSlots;
    if (absl::Status s = CudaStatus(cudaMallocHost(&memory, capacity * sizeof(uint64_t)),
                                    "allocating pinned memory for metric values");
        !s.ok()) {
      return s;
    }
    pinned_ = static_cast<uint64_t*>(memory);
    pinned_slots_ = capacity;
  }
  for (uint64_t first = 0; first < slots; first += kChunkSlots) {
    const uint64_t count = std::min<uint64_t>(kChunkSlots, slots - first);
    if (absl::Status s = CudaStatus(
            cudaMemcpyAsync(pinned_ + first, chunks_[first / kChunkSlots].data(),
                            count * sizeof(uint64_t), cudaMemcpyDeviceToHost, context_.compute),
            "reading metric values");
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          CudaStatus(cudaStreamSynchronize(context_.compute), "waiting for metric values");
      !s.ok()) {
    return s;
  }
  for (uint64_t i = 0; i < slots; ++i) {
    if (dtypes_[i] == COHORT_DTYPE_FLOAT32) {
      float value = 0;
      std::memcpy(&value, &pinned_[i], sizeof value);
      values[i] = value;
    } else {
      std::memcpy(&values[i], &pinned_[i], sizeof values[i]);
    }
  }
  dtypes_.clear();
  return values;
}

}  // namespace cohort
