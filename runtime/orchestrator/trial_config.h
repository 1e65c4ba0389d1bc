// Trial configs: what one task of a trial runs, derived from its experiment's config.
//
// A task trains one trial with fixed hyperparameters up to a number of batches, so its workers
// get the experiment's config with every hyperparameter set to the trial's value and the single
// searcher with max_length in batches; everything else (seed, optimizations, periods, storage)
// is the experiment's.
//
//   absl::StatusOr<SearcherLength> length = SearcherMaxLength(config);   // for CreateSearcher
//   absl::StatusOr<std::string> yaml = TrialConfigYaml(config, trial_hparams, 500);
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TRIAL_CONFIG_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TRIAL_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/config/experiment_config.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {

// searcher.max_length in batches. The orchestrator has no dataset to count, so a length in
// epochs needs records_per_epoch: INVALID_ARGUMENT naming both fields otherwise, and for a
// length of zero batches.
absl::StatusOr<uint64_t> MaxLengthInBatches(const ExperimentConfig& config);

// The unit the experiment's searcher counts lengths in, and its max_length in it: batches
// (MaxLengthInBatches), unless hyperparameters.global_batch_size is searched and max_length is in
// records or epochs; then records, so that trials of different batch sizes train the same data
// (each the batches of its own size that hold them: TrialBatches). A max_length in batches with a
// searched batch size is each trial's own batches, as in Determined. Errors as
// MaxLengthInBatches.
struct SearcherLength {
  uint64_t value = 0;
  bool in_records = false;
};
absl::StatusOr<SearcherLength> SearcherMaxLength(const ExperimentConfig& config);

// A length the searcher asked for, `units`, in batches of a trial whose global batch is
// `global_batch_size` over `slots`: `units` when the searcher counts batches, else the fewest
// batches holding that many records (of RecordsPerBatch each).
uint64_t TrialBatches(uint64_t units, bool in_records, uint64_t global_batch_size, uint32_t slots);

// The experiment's effective YAML with `hparams` as the hyperparameters, `searcher.name: single`
// and `searcher.max_length: <batches>`. The result parses to a config whose hyperparameters are
// `hparams` (its global_batch_size included) and whose training fingerprint depends on nothing
// but them and the experiment's, so any task of the trial can resume any checkpoint of it.
absl::StatusOr<std::string> TrialConfigYaml(const ExperimentConfig& experiment,
                                            const Hyperparameters& hparams, uint64_t batches);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TRIAL_CONFIG_H_
