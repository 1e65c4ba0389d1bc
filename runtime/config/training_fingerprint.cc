#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/config/experiment_config.h"
#include "runtime/exchange/codec_options.h"

namespace cohort {
namespace {

const char* Flag(bool value) { return value ? "true" : "false"; }

// Every value is written with its type and, for text, its length, so that no two different
// configs can produce the same canonical text.
struct CanonicalValue {
  std::string operator()(int64_t v) const { return absl::StrCat("int ", v); }
  std::string operator()(double v) const { return absl::StrFormat("double %.17g", v); }
  std::string operator()(bool v) const { return absl::StrCat("bool ", Flag(v)); }
  std::string operator()(const std::string& v) const {
    return absl::StrCat("string ", v.size(), ":", v);
  }
  std::string operator()(const Hyperparameters::Other& v) const {
    return absl::StrCat("other ", v.text.size(), ":", v.text);
  }
};

// The kind and the parameters that kind reads, e.g. "topk ratio double 0.01".
std::string CanonicalCompression(const CompressionOptions& c) {
  std::string text(CompressionKindName(c.kind));
  if (c.kind == CompressionOptions::kTopK) {
    absl::StrAppend(&text, " ratio ", CanonicalValue{}(c.topk_ratio));
  } else if (c.kind == CompressionOptions::kPowerSgd) {
    absl::StrAppend(&text, " rank ", c.powersgd_rank, " start_iter ", c.powersgd_start_iter);
  }
  return text;
}

// 64-bit FNV-1a: byte-order independent and fixed by its definition, unlike std::hash.
uint64_t Fnv1a64(absl::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

std::string TrainingFingerprint(const ExperimentConfig& config) {
  std::string text = "cohort training fingerprint v1\n";
  for (const auto& [name, value] : config.hyperparameters.values()) {
    absl::StrAppend(&text, "hyperparameter ", name.size(), ":", name, " = ",
                    std::visit(CanonicalValue{}, value), "\n");
  }
  const OptimizationsConfig& o = config.optimizations;
  absl::StrAppend(&text, "global_batch_size ", config.global_batch_size, "\n",
                  "slots_per_trial ", config.slots_per_trial, "\n",
                  "experiment_seed ",
                  config.experiment_seed ? absl::StrCat(*config.experiment_seed) : "unset", "\n",
                  "aggregation_frequency ", o.aggregation_frequency, "\n",
                  "average_aggregated_gradients ", Flag(o.average_aggregated_gradients), "\n",
                  "gradient_compression ", CanonicalCompression(o.gradient_compression), "\n",
                  "mixed_precision ", o.mixed_precision.size(), ":", o.mixed_precision, "\n");
  // Only a guard that acts changes the numbers (and the default leaves earlier fingerprints be).
  if (o.nonfinite_gradients != "ignore") {
    absl::StrAppend(&text, "nonfinite_gradients ", o.nonfinite_gradients, "\n");
  }
  return absl::StrFormat("%016x", Fnv1a64(text));
}

}  // namespace cohort
