// torch_classifier.h -- the LibTorch model of the torch_classifier test plugin, shared with the
// test that checks it against plain LibTorch: Linear(4, 8), BatchNorm1d(8), ReLU, Linear(8, 3) on
// synthetic records (record r of a split: features f_j = sin((r + 1) * (j + 1) + split); its label
// the index of the largest of f_0, f_1, f_2, a rule a network can learn from any split), with the
// mean cross-entropy as its loss. Its initial values come from torch::manual_seed(seed).
#ifndef COHORT_PLUGINS_TEST_TORCH_CLASSIFIER_H_
#define COHORT_PLUGINS_TEST_TORCH_CLASSIFIER_H_

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace torch_classifier {

inline constexpr int64_t kFeatures = 4;
inline constexpr int64_t kClasses = 3;
inline constexpr uint64_t kTrainingRecords = 64;
inline constexpr uint64_t kValidationRecords = 16;

inline torch::nn::Sequential MakeNetwork(uint64_t seed) {
  torch::manual_seed(seed);
  return torch::nn::Sequential(torch::nn::Linear(kFeatures, 8), torch::nn::BatchNorm1d(8),
                               torch::nn::ReLU(), torch::nn::Linear(8, kClasses));
}

// The records' features (batch x kFeatures) and labels, on `device`.
inline std::pair<torch::Tensor, torch::Tensor> Records(const std::vector<uint64_t>& indices,
                                                       int split, const torch::Device& device) {
  std::vector<float> features;
  std::vector<int64_t> labels;
  for (uint64_t r : indices) {
    float record[kFeatures];
    for (int64_t j = 0; j < kFeatures; ++j) {
      record[j] = static_cast<float>(
          std::sin(static_cast<double>((r + 1) * (j + 1)) + static_cast<double>(split)));
      features.push_back(record[j]);
    }
    int64_t label = 0;
    for (int64_t c = 1; c < kClasses; ++c) {
      if (record[c] > record[label]) label = c;
    }
    labels.push_back(label);
  }
  const auto count = static_cast<int64_t>(indices.size());
  return {torch::tensor(features).reshape({count, kFeatures}).to(device),
          torch::tensor(labels).to(device)};
}

// The mean cross-entropy of the network on the records.
inline torch::Tensor Loss(torch::nn::Sequential& network, const torch::Tensor& features,
                          const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(network->forward(features), labels);
}

}  // namespace torch_classifier

#endif  // COHORT_PLUGINS_TEST_TORCH_CLASSIFIER_H_
