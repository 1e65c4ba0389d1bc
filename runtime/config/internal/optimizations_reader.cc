#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/gradient_compression_reader.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/section_readers.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {

absl::Status ReadOptimizations(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                               OptimizationsConfig* out) {
  MapReader r(node, "optimizations", ignored_keys);
  r.AllowKeys({"aggregation_frequency", "average_aggregated_gradients", "average_training_metrics",
               "gradient_compression", "mixed_precision", "tensor_fusion_threshold",
               "tensor_fusion_cycle_time", "auto_tune_tensor_fusion", "nonfinite_gradients",
               "collective_timeout", "straggler_threshold", "learning_rate_scaling",
               "learning_rate_reference_slots", "zero_stage"},
              {"grad_updates_size_file"});
  r.Int("aggregation_frequency", 1, &out->aggregation_frequency);
  r.Bool("average_aggregated_gradients", &out->average_aggregated_gradients);
  r.Bool("average_training_metrics", &out->average_training_metrics);
  if (r.ok()) {
    absl::StatusOr<CompressionOptions> compression =
        ReadGradientCompression(r.Get("gradient_compression"));
    if (compression.ok()) {
      out->gradient_compression = *compression;
    } else {
      r.Fail(compression.status());
    }
  }
  r.Choice("mixed_precision", {"O0", "O1", "O2", "O3"}, &out->mixed_precision);
  // `auto` is Cohort's spelling of Determined's auto_tune_tensor_fusion: true (under the default
  // threshold); a threshold in MB with auto_tune_tensor_fusion bounds the sizes tried.
  const bool threshold_auto = r.ok() && r.Has("tensor_fusion_threshold") &&
                              r.Get("tensor_fusion_threshold").IsScalar() &&
                              r.Get("tensor_fusion_threshold").Scalar() == "auto";
  if (threshold_auto) {
    out->auto_tune_tensor_fusion = true;
  } else if (r.ok() && r.Has("tensor_fusion_threshold")) {
    const YAML::Node node = r.Get("tensor_fusion_threshold");
    const std::optional<int64_t> mb = PlainInt(node);
    if (mb && *mb >= 1 && *mb <= std::numeric_limits<uint32_t>::max()) {
      out->tensor_fusion_threshold = static_cast<uint32_t>(*mb);
    } else {
      r.Fail(Mismatch(r.PathOf("tensor_fusion_threshold"),
                      absl::StrCat("an integer from 1 to ", std::numeric_limits<uint32_t>::max(),
                                   " (MB), or auto"),
                      node));
    }
  }
  r.Int("tensor_fusion_cycle_time", 0, &out->tensor_fusion_cycle_time);
  r.Bool("auto_tune_tensor_fusion", &out->auto_tune_tensor_fusion);
  if (threshold_auto && !out->auto_tune_tensor_fusion) {
    r.Fail(absl::InvalidArgumentError(
        absl::StrCat(r.PathOf("tensor_fusion_threshold"), ": auto, but ",
                     r.PathOf("auto_tune_tensor_fusion"), " is false; drop one of them")));
  }
  r.PolicyChoice("nonfinite_gradients", &out->nonfinite_gradients);
  r.Int("collective_timeout", 1, &out->collective_timeout);
  r.PolicyChoice("learning_rate_scaling", &out->learning_rate_scaling);
  r.Int("learning_rate_reference_slots", 1, &out->learning_rate_reference_slots);
  if (std::optional<int64_t> stage = r.ReadInt("zero_stage", 0, 2)) {
    out->zero_stage = static_cast<uint32_t>(*stage);
  }
  if (std::optional<double> threshold = r.ReadNumber("straggler_threshold")) {
    if (*threshold >= 0 && *threshold <= 100) {
      out->straggler_threshold = *threshold;
    } else {
      r.Fail(absl::InvalidArgumentError(absl::StrCat(r.PathOf("straggler_threshold"),
                                                     ": expected a fraction from 0 (no warning) "
                                                     "to 100; got ",
                                                     *threshold)));
    }
  }
  return r.status();
}

}  // namespace cohort::config_internal
