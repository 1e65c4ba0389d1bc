// device_dataset.h -- one split of the MLP's records held on the GPU.
//
// Reading a record on the host costs the synthetic dataset a generator call per feature (and the
// IDX one a copy), and a batch read on the host must then cross to the device. A split small
// enough (Fits) is instead read once, when the trial starts, and copied to the device; each batch
// then sends only its record indices (4 bytes a record) and is gathered there by a kernel, on the
// plugin's stream. The records are the same as the host path's, bit for bit. Indices are staged
// in a ring of kStages pinned buffers, so the host may enqueue that many batches ahead of the
// device before Gather waits.
//
// Errors from CUDA throw std::runtime_error naming the call; an index outside the split throws
// cohort::Error OUT_OF_RANGE. One thread at a time.
#ifndef COHORT_PLUGINS_MLP_CUDA_DEVICE_DATASET_H_
#define COHORT_PLUGINS_MLP_CUDA_DEVICE_DATASET_H_

#include <cuda_runtime_api.h>

#include <cohort/plugin.hpp>
#include <cstddef>
#include <cstdint>

#include "cuda_mlp_network.h"
#include "dataset.h"

namespace mlp {

// The most feature bytes a split may hold to live on the device (256 MiB: a second or two of
// reading at start-up at most, and a small part of any GPU's memory).
inline constexpr uint64_t kMaxDeviceDatasetBytes = uint64_t{256} << 20;

class DeviceDataset {
 public:
  // Whether `data` is small enough (kMaxDeviceDatasetBytes) and not empty.
  static bool Fits(const Dataset& data);

  // Reads every record of `data` (which must Fit) and copies them to the current device; done
  // when the constructor returns. `stream` outlives this.
  DeviceDataset(const Dataset& data, cudaStream_t stream);
  ~DeviceDataset();
  DeviceDataset(const DeviceDataset&) = delete;
  DeviceDataset& operator=(const DeviceDataset&) = delete;

  // Enqueues on the stream the gather of `batch`'s records into device arrays owned by this, and
  // returns them; they hold the batch until the next Gather.
  CudaMlpNetwork::DeviceBatch Gather(const cohort::Batch& batch);

 private:
  uint64_t records_;
  size_t input_size_;
  cudaStream_t stream_;
  DeviceArray<float> features_;  // records_ x input_size_
  DeviceArray<int32_t> labels_;  // records_
  DeviceArray<uint32_t> indices_;
  DeviceArray<float> batch_inputs_;
  DeviceArray<int32_t> batch_labels_;
  static constexpr size_t kStages = 4;
  struct Stage {
    uint32_t* indices = nullptr;  // pinned host memory, `capacity` entries
    size_t capacity = 0;
    cudaEvent_t copied = nullptr;  // the last copy out of `indices`
  };
  Stage stages_[kStages];
  size_t next_stage_ = 0;
};

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_CUDA_DEVICE_DATASET_H_
