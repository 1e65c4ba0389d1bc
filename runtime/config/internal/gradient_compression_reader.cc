#include "runtime/config/internal/gradient_compression_reader.h"

#include <optional>
#include <string>

#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {
namespace {

using Form = GradientCompressionSetting::Form;

constexpr char kPath[] = "optimizations.gradient_compression";
constexpr char kExpected[] =
    "true, false, \"fp16\", \"bf16\", {type: topk, ratio: (0, 1]} or "
    "{type: powersgd, rank: >= 1, start_iter: >= 0}";

absl::StatusOr<GradientCompressionSetting> MapSetting(const YAML::Node& node) {
  MapReader r(node, kPath, /*ignored_keys=*/nullptr);
  r.AllowKeys({"type", "ratio", "rank", "start_iter"});
  GradientCompressionSetting setting;
  setting.form = Form::kMap;
  r.String("type", &setting.type);
  setting.ratio = r.ReadNumber("ratio");
  setting.rank = r.ReadNumber("rank");
  setting.start_iter = r.ReadNumber("start_iter");
  if (!r.ok()) return r.status();
  return setting;
}

absl::StatusOr<GradientCompressionSetting> SettingOf(const YAML::Node& node) {
  GradientCompressionSetting setting;
  if (IsAbsent(node)) return setting;
  if (node.IsMap()) return MapSetting(node);
  if (!node.IsScalar()) return Mismatch(kPath, kExpected, node);
  if (std::optional<bool> enabled = PlainBool(node)) {
    setting.form = Form::kBool;
    setting.enabled = *enabled;
  } else {
    setting.form = Form::kString;
    setting.type = node.Scalar();
  }
  return setting;
}

}  // namespace

absl::StatusOr<CompressionOptions> ReadGradientCompression(const YAML::Node& node) {
  absl::StatusOr<GradientCompressionSetting> setting = SettingOf(node);
  if (!setting.ok()) return setting.status();
  return ParseCompressionOptions(*setting);
}

}  // namespace cohort::config_internal
