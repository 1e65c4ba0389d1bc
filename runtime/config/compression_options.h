// CompressionOptions: the gradient compression a trial asked for, read from Determined's
// `optimizations.gradient_compression` (where Cohort also accepts strings and maps).
//
// Accepted forms of the YAML value, handed over as a GradientCompressionSetting:
//   absent or null, false        -> kNone
//   true, "fp16"                 -> kFp16 (Determined's meaning of true)
//   "bf16"                       -> kBf16
//   {type: topk, ratio: R}       -> kTopK, R in (0, 1], required
//   {type: powersgd, rank: N, start_iter: S}  -> kPowerSgd, N >= 1 (default 1), S >= 0 (default
//                                   1000: exact exchange for the first S iterations), whole numbers
//   {type: fp16} / {type: bf16} / {type: none} are the same as the plain forms.
//
//   GradientCompressionSetting setting;
//   setting.form = GradientCompressionSetting::Form::kMap;
//   setting.type = "topk";
//   setting.ratio = 0.01;
//   absl::StatusOr<CompressionOptions> options = ParseCompressionOptions(setting);
//
// Thread-safety: plain values and pure functions; safe to use from any thread.
#ifndef COHORT_RUNTIME_CONFIG_COMPRESSION_OPTIONS_H_
#define COHORT_RUNTIME_CONFIG_COMPRESSION_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

struct CompressionOptions {
  enum Kind { kNone, kFp16, kBf16, kTopK, kPowerSgd };
  Kind kind = kNone;
  double topk_ratio = 0;             // kTopK: (0, 1]
  uint32_t powersgd_rank = 0;        // kPowerSgd: >= 1
  uint64_t powersgd_start_iter = 0;  // kPowerSgd: iterations exchanged uncompressed first
};

// The value of `optimizations.gradient_compression` as the config reader found it.
struct GradientCompressionSetting {
  enum class Form { kAbsent, kBool, kString, kMap };
  Form form = Form::kAbsent;         // kAbsent also stands for YAML null
  bool enabled = false;              // kBool
  std::string type;                  // kString: the string; kMap: the `type` key ("" when missing)
  std::optional<double> ratio;       // kMap: `ratio`, when given
  std::optional<double> rank;        // kMap: `rank`, when given
  std::optional<double> start_iter;  // kMap: `start_iter`, when given
};

// "none", "fp16", "bf16", "topk", "powersgd".
absl::string_view CompressionKindName(CompressionOptions::Kind kind);

// For logs: the kind and its settings, e.g. "topk (ratio 0.01)" or "powersgd (rank 2, start_iter
// 1000)".
std::string DescribeCompression(const CompressionOptions& options);

// Validates `setting` into options. INVALID_ARGUMENT naming `optimizations.gradient_compression`
// (and the key at fault) with the allowed values: an unknown type, a missing or out-of-range
// ratio, a rank or start_iter out of range or not a whole number, or a key that does not apply to
// the type (e.g. ratio with powersgd).
absl::StatusOr<CompressionOptions> ParseCompressionOptions(
    const GradientCompressionSetting& setting);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_COMPRESSION_OPTIONS_H_
