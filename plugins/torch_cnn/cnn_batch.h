// cnn_batch.h -- records of cnn_data.h's datasets as LibTorch tensors, for the torch_cnn example,
// its plain LibTorch loop (bench/torch_cnn_loop.cc) and its test: read for each batch (Gather),
// or read once and kept on a device (ResidentRecords). Apart from cnn_data.h so that the datasets
// compile without LibTorch's headers.
//
// Thread-safety: Gather may run on several threads over the same dataset; a ResidentRecords is
// read-only once made.
#ifndef COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_
#define COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_

#include <torch/torch.h>

#include <cohort/plugin.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cnn_data.h"

namespace torch_cnn {

// The images (float32 [count, 1, 28, 28]) and labels (int64 [count]) of records
// indices[0..count) of `data`, on the CPU. Throws cohort::Error(OUT_OF_RANGE) for an index past
// the split's end.
inline std::pair<torch::Tensor, torch::Tensor> Gather(const mlp::Dataset& data,
                                                      const uint64_t* indices, size_t count) {
  const auto n = static_cast<int64_t>(count);
  torch::Tensor images = torch::empty({n, 1, 28, 28}, torch::kFloat32);
  torch::Tensor labels = torch::empty({n}, torch::kInt64);
  float* pixels = images.data_ptr<float>();
  int64_t* label = labels.data_ptr<int64_t>();
  for (size_t i = 0; i < count; ++i) {
    if (indices[i] >= data.size()) {
      throw cohort::Error(
          COHORT_STATUS_OUT_OF_RANGE,
          "record " + std::to_string(indices[i]) + " of a split of " + std::to_string(data.size()));
    }
    label[i] = data.Read(indices[i], pixels + i * kPixels);
  }
  return {images, labels};
}

// Every record of `data`, read once, as Gather gives them, on `device`: a split kept where the
// network computes, from which each batch is gathered by index (ResidentRecords::Batch).
class ResidentRecords {
 public:
  ResidentRecords(const mlp::Dataset& data, const torch::Device& device) {
    std::vector<uint64_t> all(data.size());
    for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
    auto [images, labels] = Gather(data, all.data(), all.size());
    images_ = images.to(device);
    labels_ = labels.to(device);
  }

  // Records indices[0..count), as Gather(data, indices, count) gives them, on the device. Throws
  // cohort::Error(OUT_OF_RANGE) for an index past the split's end.
  std::pair<torch::Tensor, torch::Tensor> Batch(const uint64_t* indices, size_t count) const {
    const auto size = static_cast<uint64_t>(labels_.size(0));
    torch::Tensor chosen = torch::empty({static_cast<int64_t>(count)}, torch::kInt64);
    int64_t* chosen_index = chosen.data_ptr<int64_t>();
    for (size_t i = 0; i < count; ++i) {
      if (indices[i] >= size) {
        throw cohort::Error(
            COHORT_STATUS_OUT_OF_RANGE,
            "record " + std::to_string(indices[i]) + " of a split of " + std::to_string(size));
      }
      chosen_index[i] = static_cast<int64_t>(indices[i]);
    }
    chosen = chosen.to(images_.device());
    return {images_.index_select(0, chosen), labels_.index_select(0, chosen)};
  }

 private:
  torch::Tensor images_;  // float32 [size, 1, 28, 28]
  torch::Tensor labels_;  // int64 [size]
};

}  // namespace torch_cnn

#endif  // COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_
