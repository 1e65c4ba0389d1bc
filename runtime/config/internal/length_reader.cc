#include "runtime/config/internal/length_reader.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {
namespace {

constexpr absl::string_view kExpectedUnit = "exactly one of batches, records, epochs";

std::optional<LengthUnit> UnitNamed(const YAML::Node& key) {
  if (!IsPlainScalar(key)) return std::nullopt;
  if (key.Scalar() == "batches") return LengthUnit::kBatches;
  if (key.Scalar() == "records") return LengthUnit::kRecords;
  if (key.Scalar() == "epochs") return LengthUnit::kEpochs;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Length> ReadLength(const YAML::Node& node, absl::string_view path,
                                  uint64_t min_value) {
  Length length;
  YAML::Node count = node;
  std::string count_path(path);
  if (node.IsMap()) {
    std::optional<LengthUnit> unit;
    const YAML::Node key = node.size() == 1 ? node.begin()->first : YAML::Node();
    if (node.size() == 1) unit = UnitNamed(key);
    if (!unit) return Mismatch(path, kExpectedUnit, node);
    length.unit = *unit;
    count.reset(node.begin()->second);
    count_path = JoinPath(path, key.Scalar());
  } else if (!PlainInt(node)) {
    return Mismatch(path, kExpectedUnit, node);
  }
  const std::optional<int64_t> value = PlainInt(count);
  if (!value || *value < 0 || static_cast<uint64_t>(*value) < min_value) {
    return Mismatch(count_path, absl::StrCat("an integer >= ", min_value), count);
  }
  length.value = static_cast<uint64_t>(*value);
  return length;
}

}  // namespace cohort::config_internal
