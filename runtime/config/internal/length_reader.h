// Reads a Determined length: how long to train, or how often to validate or checkpoint.
//
//   ReadLength(YAML::Load("{epochs: 2}"), "searcher.max_length", 1);  // {kEpochs, 2}
//   ReadLength(YAML::Load("100"), "searcher.max_length", 1);          // {kBatches, 100}
//   ReadLength(YAML::Load("{minutes: 3}"), "searcher.max_length", 1);
//   // "searcher.max_length: expected exactly one of batches, records, epochs; got {minutes: 3}"
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_LENGTH_READER_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_LENGTH_READER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {

// `{batches: N}`, `{records: N}` or `{epochs: N}` (exactly one key), or a bare integer meaning
// batches (Determined's legacy form). N must be an integer >= `min_value`.
absl::StatusOr<Length> ReadLength(const YAML::Node& node, absl::string_view path,
                                  uint64_t min_value);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_LENGTH_READER_H_
