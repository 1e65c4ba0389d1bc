#include "runtime/config/internal/map_reader.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/config/internal/length_reader.h"
#include "runtime/config/internal/yaml_values.h"
#include "runtime/text/closest_name.h"

namespace cohort::config_internal {
namespace {

// Bounds wider than an int32 read as "an integer >= min" unless the value actually exceeds them.
constexpr int64_t kUnremarkableMax = std::numeric_limits<int32_t>::max();

std::string IntegerRange(int64_t min, int64_t max, bool out_of_range) {
  if (max <= kUnremarkableMax || out_of_range) {
    return absl::StrCat("an integer between ", min, " and ", max);
  }
  if (min == std::numeric_limits<int64_t>::min()) return "an integer";
  return absl::StrCat("an integer >= ", min);
}

std::string UnknownKey(absl::string_view path, absl::string_view key,
                       absl::Span<const absl::string_view> used,
                       absl::Span<const absl::string_view> ignored) {
  std::vector<absl::string_view> known(used.begin(), used.end());
  known.insert(known.end(), ignored.begin(), ignored.end());
  const std::string where = JoinPath(path, key);
  if (std::optional<std::string> near = ClosestName(key, known)) {
    return absl::StrCat(where, ": unknown key; did you mean '", *near, "'?");
  }
  return absl::StrCat(where, ": unknown key; expected one of ", absl::StrJoin(used, ", "),
                      ignored.empty() ? "" : " (or a Determined key Cohort ignores)");
}

}  // namespace

absl::Status Mismatch(absl::string_view path, absl::string_view expected, const YAML::Node& got) {
  return absl::InvalidArgumentError(absl::StrCat(path.empty() ? "experiment config" : path,
                                                 ": expected ", expected, "; got ",
                                                 DescribeNode(got)));
}

std::string JoinPath(absl::string_view parent, absl::string_view key) {
  return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
}

MapReader::MapReader(YAML::Node node, std::string path, std::vector<std::string>* ignored_keys)
    : node_(node.IsDefined() ? std::move(node) : YAML::Node(YAML::NodeType::Undefined)),
      path_(std::move(path)),
      ignored_keys_(ignored_keys) {
  if (!IsAbsent(node_) && !node_.IsMap()) status_ = Mismatch(path_, "a map of keys", node_);
}

void MapReader::AllowKeys(absl::Span<const absl::string_view> used,
                          absl::Span<const absl::string_view> ignored) {
  if (!ok() || !node_.IsMap()) return;
  auto contains = [](absl::Span<const absl::string_view> names, absl::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      return Fail(Mismatch(path_, "keys that are names", entry.first));
    }
    const std::string& key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat(PathOf(key), ": given twice; expected each key once")));
    }
    if (contains(used, key)) continue;
    if (!contains(ignored, key)) {
      return Fail(absl::InvalidArgumentError(UnknownKey(path_, key, used, ignored)));
    }
    if (ignored_keys_ != nullptr) ignored_keys_->push_back(PathOf(key));
  }
}

std::optional<int64_t> MapReader::ReadInt(absl::string_view key, int64_t min, int64_t max) {
  if (!ok() || IsAbsentKey(key)) return std::nullopt;
  const YAML::Node node = Get(key);
  const std::optional<int64_t> value = PlainInt(node);
  if (!value || *value < min || *value > max) {
    // A number too wide to read is past any bound too: say the bounds.
    const bool out_of_range = (value && *value > max) || IsTooWideInt(node);
    Fail(Mismatch(PathOf(key), IntegerRange(min, max, out_of_range), node));
    return std::nullopt;
  }
  return value;
}

std::optional<double> MapReader::ReadNumber(absl::string_view key) {
  if (!ok() || IsAbsentKey(key)) return std::nullopt;
  const std::optional<double> value = PlainNumber(Get(key));
  if (!value) Fail(Mismatch(PathOf(key), "a number", Get(key)));
  return value;
}

std::optional<bool> MapReader::ReadBool(absl::string_view key) {
  if (!ok() || IsAbsentKey(key)) return std::nullopt;
  const std::optional<bool> value = PlainBool(Get(key));
  if (!value) Fail(Mismatch(PathOf(key), "true or false", Get(key)));
  return value;
}

std::optional<std::string> MapReader::ReadString(absl::string_view key) {
  if (!ok() || IsAbsentKey(key)) return std::nullopt;
  const YAML::Node node = Get(key);
  if (!node.IsScalar()) {
    Fail(Mismatch(PathOf(key), "a string", node));
    return std::nullopt;
  }
  return node.Scalar();
}

void MapReader::Bool(absl::string_view key, bool* out) {
  if (std::optional<bool> value = ReadBool(key)) *out = *value;
}

void MapReader::String(absl::string_view key, std::string* out) {
  if (std::optional<std::string> value = ReadString(key)) *out = std::move(*value);
}

void MapReader::Choice(absl::string_view key, absl::Span<const absl::string_view> allowed,
                       std::string* out) {
  std::optional<std::string> value = ReadString(key);
  if (!value) return;
  if (std::find(allowed.begin(), allowed.end(), *value) == allowed.end()) {
    return Fail(
        Mismatch(PathOf(key), absl::StrCat("one of ", absl::StrJoin(allowed, ", ")), Get(key)));
  }
  *out = std::move(*value);
}

void MapReader::SupportedChoice(absl::string_view key,
                                std::initializer_list<absl::string_view> supported,
                                std::initializer_list<absl::string_view> determined_only,
                                absl::string_view kind, absl::string_view reason,
                                std::string* out) {
  std::optional<std::string> value = ReadString(key);
  if (!value) return;
  if (std::find(supported.begin(), supported.end(), *value) != supported.end()) {
    *out = std::move(*value);
    return;
  }
  std::string expected = supported.size() == 1
                             ? std::string(*supported.begin())
                             : absl::StrCat("one of ", absl::StrJoin(supported, ", "));
  if (std::find(determined_only.begin(), determined_only.end(), *value) != determined_only.end()) {
    absl::StrAppend(&expected, " (", reason, reason.empty() ? "" : "; ", "Determined's ", *value,
                    " ", kind, " is not supported)");
  }
  Fail(Mismatch(PathOf(key), expected, Get(key)));
}

void MapReader::LengthField(absl::string_view key, uint64_t min_value, std::optional<Length>* out) {
  if (!ok() || IsAbsentKey(key)) return;
  absl::StatusOr<Length> length = ReadLength(Get(key), PathOf(key), min_value);
  if (!length.ok()) return Fail(length.status());
  *out = *length;
}

void MapReader::LengthField(absl::string_view key, uint64_t min_value, Length* out) {
  std::optional<Length> length;
  LengthField(key, min_value, &length);
  if (length) *out = *length;
}

void MapReader::Require(absl::string_view key, absl::string_view expected) {
  if (ok() && IsAbsentKey(key)) Fail(Mismatch(PathOf(key), expected, Get(key)));
}

YAML::Node MapReader::Get(absl::string_view key) const {
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& map = node_;
  YAML::Node value = map[std::string(key)];
  // yaml-cpp's placeholder for a missing key throws on most calls; return a plain undefined node.
  return value.IsDefined() ? value : YAML::Node(YAML::NodeType::Undefined);
}

bool MapReader::IsAbsentKey(absl::string_view key) const { return IsAbsent(Get(key)); }

void MapReader::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

}  // namespace cohort::config_internal
