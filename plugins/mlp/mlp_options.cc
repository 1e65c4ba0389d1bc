// mlp_options.cc -- reading and checking the MLP plugin's hyperparameters (see mlp_options.h).
#include "mlp_options.h"

#include <string>
#include <string_view>

#include "idx_dataset.h"
#include "synthetic_dataset.h"

namespace mlp {
namespace {

// The int hyperparameter `name`, or `fallback` when absent; at least `minimum`.
uint64_t CountAtLeast(const cohort::Host& host, std::string_view name, uint64_t fallback,
                      int64_t minimum) {
  const int64_t value = host.hparam_int_or(name, static_cast<int64_t>(fallback));
  if (value < minimum) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "hyperparameter '" + std::string(name) + "' must be at least " +
                            std::to_string(minimum) + ", got " + std::to_string(value));
  }
  return static_cast<uint64_t>(value);
}

}  // namespace

MlpOptions ReadMlpOptions(const cohort::Host& host) {
  MlpOptions o;  // starts at the defaults
  o.hidden_size = CountAtLeast(host, "hidden_size", o.hidden_size, 1);
  o.hidden_layers = CountAtLeast(host, "hidden_layers", o.hidden_layers, 0);
  o.data_dir = host.hparam_string_or("data_dir", "");
  o.synthetic_train_records =
      CountAtLeast(host, "synthetic_train_records", o.synthetic_train_records, 1);
  o.synthetic_validation_records =
      CountAtLeast(host, "synthetic_validation_records", o.synthetic_validation_records, 0);
  o.synthetic_input_dim = CountAtLeast(host, "synthetic_input_dim", o.synthetic_input_dim, 1);
  o.synthetic_classes = CountAtLeast(host, "synthetic_classes", o.synthetic_classes, 2);
  o.slow_rank = host.hparam_int_or("slow_rank", o.slow_rank);
  o.slow_rank_ms = CountAtLeast(host, "slow_rank_ms", o.slow_rank_ms, 0);
  return o;
}

MlpDatasets OpenDatasets(const MlpOptions& options) {
  MlpDatasets data;
  if (!options.data_dir.empty()) {
    data.training = IdxDataset::OpenMnist(options.data_dir, COHORT_SPLIT_TRAINING);
    data.validation = IdxDataset::OpenMnist(options.data_dir, COHORT_SPLIT_VALIDATION);
  } else {
    data.training =
        std::make_unique<SyntheticDataset>(COHORT_SPLIT_TRAINING, options.synthetic_train_records,
                                           options.synthetic_input_dim, options.synthetic_classes);
    data.validation = std::make_unique<SyntheticDataset>(
        COHORT_SPLIT_VALIDATION, options.synthetic_validation_records, options.synthetic_input_dim,
        options.synthetic_classes);
  }
  if (data.training->input_size() != data.validation->input_size()) {
    throw cohort::Error(COHORT_STATUS_INVALID_ARGUMENT,
                        "training records have " + std::to_string(data.training->input_size()) +
                            " features but validation records have " +
                            std::to_string(data.validation->input_size()));
  }
  return data;
}

std::vector<size_t> LayerWidths(const MlpOptions& options, const Dataset& data) {
  std::vector<size_t> widths{data.input_size()};
  widths.insert(widths.end(), options.hidden_layers, options.hidden_size);
  widths.push_back(data.class_count());
  return widths;
}

}  // namespace mlp
