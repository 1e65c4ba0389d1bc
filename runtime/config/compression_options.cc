#include "runtime/config/compression_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cohort {
namespace {

using Kind = CompressionOptions::Kind;
using Form = GradientCompressionSetting::Form;

constexpr char kField[] = "optimizations.gradient_compression";
constexpr char kAllowed[] =
    "allowed: true, false, \"none\", \"fp16\", \"bf16\" (or {type: none | fp16 | bf16}), "
    "{type: topk, ratio: (0, 1]}, {type: powersgd, rank: >= 1, start_iter: >= 0}";
constexpr uint64_t kDefaultPowerSgdStartIter = 1000;

absl::Status Invalid(absl::string_view key, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(kField, key.empty() ? "" : ".", key, ": ", problem, "; ", kAllowed));
}

absl::StatusOr<Kind> KindNamed(absl::string_view type, absl::string_view key) {
  for (Kind kind : {Kind::kNone, Kind::kFp16, Kind::kBf16, Kind::kTopK, Kind::kPowerSgd}) {
    if (type == CompressionKindName(kind)) return kind;
  }
  return Invalid(key, absl::StrCat("unknown compression \"", type, "\""));
}

absl::Status NotFor(absl::string_view key, const std::optional<double>& value, Kind kind) {
  if (!value) return absl::OkStatus();
  return Invalid(key, absl::StrCat("does not apply to type ", CompressionKindName(kind)));
}

// A whole number >= `minimum` that fits `limit`, or an error naming `key`.
absl::StatusOr<uint64_t> WholeNumber(absl::string_view key, double value, double minimum,
                                     double limit) {
  if (!(value >= minimum && value <= limit && std::floor(value) == value)) {
    // The value as read (a double: a 20-digit number shows as 1e+20), and both bounds, whole
    // numbers below 2^64 (every bound here) written out: "to 9223372036854775808", not 9.2e+18.
    const auto bound = [](double b) {
      return b >= 0 && b < 0x1p64 && std::floor(b) == b ? absl::StrCat(static_cast<uint64_t>(b))
                                                        : absl::StrFormat("%.17g", b);
    };
    return Invalid(key, absl::StrFormat("%.17g is not a whole number from %s to %s", value,
                                        bound(minimum), bound(limit)));
  }
  return static_cast<uint64_t>(value);
}

absl::StatusOr<CompressionOptions> ParseMap(const GradientCompressionSetting& setting) {
  if (setting.type.empty()) return Invalid("type", "missing");
  absl::StatusOr<Kind> kind = KindNamed(setting.type, "type");
  if (!kind.ok()) return kind.status();
  CompressionOptions options;
  options.kind = *kind;
  if (*kind != Kind::kTopK) {
    if (absl::Status s = NotFor("ratio", setting.ratio, *kind); !s.ok()) return s;
  }
  if (*kind != Kind::kPowerSgd) {
    if (absl::Status s = NotFor("rank", setting.rank, *kind); !s.ok()) return s;
    if (absl::Status s = NotFor("start_iter", setting.start_iter, *kind); !s.ok()) return s;
  }
  if (*kind == Kind::kTopK) {
    if (!setting.ratio) return Invalid("ratio", "required for type topk");
    const double ratio = *setting.ratio;
    if (!(ratio > 0 && ratio <= 1))
      return Invalid("ratio", absl::StrCat(ratio, " is not in (0, 1]"));
    options.topk_ratio = ratio;
  }
  if (*kind == Kind::kPowerSgd) {
    absl::StatusOr<uint64_t> rank = WholeNumber("rank", setting.rank.value_or(1), 1, UINT32_MAX);
    if (!rank.ok()) return rank.status();
    absl::StatusOr<uint64_t> start = WholeNumber(
        "start_iter", setting.start_iter.value_or(kDefaultPowerSgdStartIter), 0, 0x1p63);
    if (!start.ok()) return start.status();
    options.powersgd_rank = static_cast<uint32_t>(*rank);
    options.powersgd_start_iter = *start;
  }
  return options;
}

}  // namespace

absl::string_view CompressionKindName(CompressionOptions::Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "none";
    case Kind::kFp16:
      return "fp16";
    case Kind::kBf16:
      return "bf16";
    case Kind::kTopK:
      return "topk";
    case Kind::kPowerSgd:
      return "powersgd";
  }
  return "unknown";
}

std::string DescribeCompression(const CompressionOptions& options) {
  switch (options.kind) {
    case Kind::kTopK:
      return absl::StrCat("topk (ratio ", options.topk_ratio, ")");
    case Kind::kPowerSgd:
      return absl::StrCat("powersgd (rank ", options.powersgd_rank, ", start_iter ",
                          options.powersgd_start_iter, ")");
    default:
      return std::string(CompressionKindName(options.kind));
  }
}

absl::StatusOr<CompressionOptions> ParseCompressionOptions(
    const GradientCompressionSetting& setting) {
  CompressionOptions options;
  switch (setting.form) {
    case Form::kAbsent:
      return options;
    case Form::kBool:
      options.kind = setting.enabled ? Kind::kFp16 : Kind::kNone;
      return options;
    case Form::kString: {
      absl::StatusOr<Kind> kind = KindNamed(setting.type, "");
      if (!kind.ok()) return kind.status();
      if (*kind == Kind::kTopK || *kind == Kind::kPowerSgd) {
        return Invalid("", absl::StrCat("\"", setting.type, "\" needs its parameters, as a map"));
      }
      options.kind = *kind;
      return options;
    }
    case Form::kMap:
      return ParseMap(setting);
  }
  return Invalid("", "unknown form");
}

}  // namespace cohort
