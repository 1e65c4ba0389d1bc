// device_dataset.cc -- DeviceDataset (see device_dataset.h).
#include "device_dataset.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "mlp_cuda_kernels.h"
#include "mlp_glue.h"

namespace mlp {
namespace {

// Records read on the host per copy to the device while loading (about 16 MiB of features).
uint64_t LoadChunk(size_t input_size) {
  return std::max<uint64_t>(1, (uint64_t{16} << 20) / (input_size * sizeof(float)));
}

}  // namespace

bool DeviceDataset::Fits(const Dataset& data) {
  const uint64_t per_record = data.input_size() * sizeof(float);
  return data.size() > 0 && per_record > 0 && data.size() <= kMaxDeviceDatasetBytes / per_record;
}

DeviceDataset::DeviceDataset(const Dataset& data, cudaStream_t stream)
    : records_(data.size()), input_size_(data.input_size()), stream_(stream) {
  if (!Fits(data)) throw std::invalid_argument("the dataset is too large to hold on the device");
  float* features = features_.Reserve(records_ * input_size_);
  int32_t* labels = labels_.Reserve(records_);
  const uint64_t chunk = LoadChunk(input_size_);
  std::vector<float> host_features(std::min(chunk, records_) * input_size_);
  std::vector<int32_t> host_labels(std::min(chunk, records_));
  for (uint64_t first = 0; first < records_; first += chunk) {
    const uint64_t count = std::min(chunk, records_ - first);
    for (uint64_t r = 0; r < count; ++r) {
      host_labels[r] = data.Read(first + r, host_features.data() + r * input_size_);
    }
    // Plain copies from pageable memory: complete on return, so the host buffers can be reused.
    Check(cudaMemcpy(features + first * input_size_, host_features.data(),
                     count * input_size_ * sizeof(float), cudaMemcpyHostToDevice),
          "copying the dataset's records to the device");
    Check(cudaMemcpy(labels + first, host_labels.data(), count * sizeof(int32_t),
                     cudaMemcpyHostToDevice),
          "copying the dataset's labels to the device");
  }
  for (Stage& stage : stages_) {
    Check(cudaEventCreateWithFlags(&stage.copied, cudaEventDisableTiming),
          "cudaEventCreate for the dataset's indices");
  }
}

DeviceDataset::~DeviceDataset() {
  for (Stage& stage : stages_) {
    if (stage.copied != nullptr) {
      cudaEventSynchronize(stage.copied);
      cudaEventDestroy(stage.copied);
    }
    cudaFreeHost(stage.indices);
  }
}

CudaMlpNetwork::DeviceBatch DeviceDataset::Gather(const cohort::Batch& batch) {
  const size_t rows = batch.size();
  CheckRecords(batch, records_);
  if (rows == 0) return {batch_inputs_.data(), batch_labels_.data(), 0};
  // This stage's indices of kStages batches ago may still be on their way to the device.
  Stage& stage = stages_[next_stage_];
  next_stage_ = (next_stage_ + 1) % kStages;
  Check(cudaEventSynchronize(stage.copied), "waiting for an earlier batch's indices");
  if (stage.capacity < rows) {
    cudaFreeHost(stage.indices);
    stage.indices = nullptr;
    stage.capacity = 0;
    void* pinned = nullptr;
    Check(cudaMallocHost(&pinned, rows * sizeof(uint32_t)), "cudaMallocHost for batch indices");
    stage.indices = static_cast<uint32_t*>(pinned);
    stage.capacity = rows;
  }
  for (size_t i = 0; i < rows; ++i) {
    stage.indices[i] = static_cast<uint32_t>(batch[i]);  // Fits bounds records_ below 2^32
  }
  uint32_t* indices = indices_.Reserve(rows);
  Check(cudaMemcpyAsync(indices, stage.indices, rows * sizeof(uint32_t), cudaMemcpyHostToDevice,
                        stream_),
        "copying the batch's indices");
  Check(cudaEventRecord(stage.copied, stream_), "marking the batch's indices sent");
  float* inputs = batch_inputs_.Reserve(rows * input_size_);
  int32_t* labels = batch_labels_.Reserve(rows);
  Check(EnqueueGatherRecords(features_.data(), labels_.data(), indices, rows, input_size_, inputs,
                             labels, stream_),
        "the record gather kernel");
  return {inputs, labels, rows};
}

}  // namespace mlp
