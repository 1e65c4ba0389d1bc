#include "runtime/exchange/cuda/cuda_value_reader.h"

#include <algorithm>
#include <cstring>

#include "runtime/exchange/cuda/value_kernels.h"

namespace cohort {

CudaValueReader::~CudaValueReader() {
  cudaSetDevice(context_.device);
  cudaStreamSynchronize(context_.compute);  // no copy into a chunk is still under way
  cudaFreeHost(pinned_);
}

absl::StatusOr<uint32_t> CudaValueReader::Capture(const void* device_value, cohort_dtype dtype) {
  if (dtype != COHORT_DTYPE_FLOAT32 && dtype != COHORT_DTYPE_FLOAT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("a device value must be float32 or float64, not dtype ",
                     static_cast<int>(dtype)));
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
  uint64_t* target = chunks_[slot / kChunkSlots].data() + slot % kChunkSlots;
  const uint32_t bytes = dtype == COHORT_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double);
  if (absl::Status s = CudaStatus(EnqueueCopyValue(device_value, bytes, target, context_.compute),
                                  "capturing a metric value on the device");
      !s.ok()) {
    return s;
  }
  dtypes_.push_back(dtype);
  return static_cast<uint32_t>(slot);
}

absl::StatusOr<std::vector<double>> CudaValueReader::TakeAll() {
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
