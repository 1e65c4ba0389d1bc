// Reads `optimizations.gradient_compression`: Determined's bool, or Cohort's string and map forms.
//
//   ReadGradientCompression(YAML::Load("true"));                        // {kFp16}
//   ReadGradientCompression(YAML::Load("bf16"));                        // {kBf16}
//   ReadGradientCompression(YAML::Load("{type: topk, ratio: 0.01}"));   // {kTopK, 0.01}
//   ReadGradientCompression(YAML::Load("zip"));
//   // "optimizations.gradient_compression: unknown compression \"zip\"; allowed: true, false, ..."
//
// The node becomes a GradientCompressionSetting and ParseCompressionOptions validates it (see
// runtime/config/compression_options.h for every form and its limits).
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_GRADIENT_COMPRESSION_READER_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_GRADIENT_COMPRESSION_READER_H_

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "runtime/config/compression_options.h"

namespace cohort::config_internal {

// Absent or null: no compression. A plain bool, a string, or a map with the keys type, ratio,
// rank and start_iter; anything else (a list, an unknown key, a number where a number does not
// belong) is INVALID_ARGUMENT naming `optimizations.gradient_compression` or its key.
absl::StatusOr<CompressionOptions> ReadGradientCompression(const YAML::Node& node);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_GRADIENT_COMPRESSION_READER_H_
