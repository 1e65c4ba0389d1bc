// mlp_options.h -- the MLP plugin's hyperparameters, and the datasets they select.
//
// Every hyperparameter is optional:
//   hidden_size (int, 64), hidden_layers (int, 2)    the network: input -> hidden x N -> classes
//   data_dir (string)                                 read MNIST's IDX files from this folder...
//   synthetic_train_records (int, 60000)              ...or, when data_dir is absent, use the
//   synthetic_validation_records (int, 10000)            built-in SyntheticDataset of this shape
//   synthetic_input_dim (int, 32)
//   synthetic_classes (int, 10)
//   slow_rank (int, -1), slow_rank_ms (int, 0)        a test's straggler: rank slow_rank sleeps
//                                                     slow_rank_ms in every train_batch
// A value out of range (for example hidden_size 0) or of the wrong type is an INVALID_ARGUMENT
// error naming the hyperparameter.
#ifndef COHORT_PLUGINS_MLP_MLP_OPTIONS_H_
#define COHORT_PLUGINS_MLP_MLP_OPTIONS_H_

#include <cohort/plugin.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataset.h"

namespace mlp {

struct MlpOptions {
  size_t hidden_size = 64;
  size_t hidden_layers = 2;
  std::string data_dir;  // empty: synthetic data
  uint64_t synthetic_train_records = 60000;
  uint64_t synthetic_validation_records = 10000;
  size_t synthetic_input_dim = 32;
  size_t synthetic_classes = 10;
  int64_t slow_rank = -1;  // none
  uint64_t slow_rank_ms = 0;
};

// Reads the options from the trial's hyperparameters (throws cohort::Error).
MlpOptions ReadMlpOptions(const cohort::Host& host);

// Both splits of the data the options select, with the same input size and class count.
struct MlpDatasets {
  std::unique_ptr<Dataset> training;
  std::unique_ptr<Dataset> validation;
};
MlpDatasets OpenDatasets(const MlpOptions& options);

// {inputs, hidden_size x hidden_layers, classes}: the widths of the network for `data`.
std::vector<size_t> LayerWidths(const MlpOptions& options, const Dataset& data);

}  // namespace mlp

#endif  // COHORT_PLUGINS_MLP_MLP_OPTIONS_H_
