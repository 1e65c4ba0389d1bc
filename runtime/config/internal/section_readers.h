// Readers for the experiment config's sections that have their own schema.
//
//   SearcherConfig searcher;
//   absl::Status s = ReadSearcher(root["searcher"], &ignored_keys, &searcher);
//
// Each reads the section found at its top-level key (absent or null: defaults, which for the
// searcher means the required fields are missing), validates it, appends the paths of accepted but
// unused Determined keys to `ignored_keys`, and returns INVALID_ARGUMENT naming the field on error.
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_SECTION_READERS_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_SECTION_READERS_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {

// `searcher`: single, grid, random or adaptive_asha, with the keys that searcher reads; the other
// Determined searcher keys are ignored (but type-checked). Determined's other searchers are named
// in the error.
absl::Status ReadSearcher(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                          SearcherConfig* out);

// The Cohort searchers that read the searcher key `key` beyond name, metric, smaller_is_better
// and max_length ("bracket_rungs": adaptive_asha), in a fixed order; none for another key.
std::vector<std::string> SearchersReading(absl::string_view key);

// `optimizations`.
absl::Status ReadOptimizations(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                               OptimizationsConfig* out);

// `checkpoint_storage`: only type shared_fs. An absolute storage_path inside host_path is made
// relative to it; one outside host_path, one that climbs out with "..", or one without a host_path
// is an error.
absl::Status ReadCheckpointStorage(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                                   CheckpointStorageConfig* out);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_SECTION_READERS_H_
