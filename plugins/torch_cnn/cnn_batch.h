// cnn_batch.h -- records of cnn_data.h's datasets as LibTorch tensors, for the torch_cnn example,
// its plain LibTorch loop (bench/torch_cnn_loop.cc) and its test. Apart from cnn_data.h so that
// the datasets compile without LibTorch's headers.
//
// Thread-safety: Gather may run on several threads over the same dataset.
#ifndef COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_
#define COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_

#include <torch/torch.h>

#include <cohort/plugin.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

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

}  // namespace torch_cnn

#endif  // COHORT_PLUGINS_TORCH_CNN_CNN_BATCH_H_
