#include "runtime/config/internal/hyperparameter_reader.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {
namespace {

using Spaces = std::map<std::string, HyperparameterSpace>;

// Integer bounds beyond this cannot be held exactly in HyperparameterSpace's doubles.
constexpr int64_t kMaxExactInteger = int64_t{1} << 53;

// Reads minval and maxval (integers when `integers`), checking minval <= maxval.
void ReadBounds(MapReader& r, bool integers, HyperparameterSpace* space) {
  const char* expected = integers ? "an integer" : "a number";
  r.Require("minval", expected);
  r.Require("maxval", expected);
  std::optional<double> bounds[2];
  const char* keys[2] = {"minval", "maxval"};
  for (int i = 0; i < 2; ++i) {
    if (!integers) {
      bounds[i] = r.ReadNumber(keys[i]);
    } else if (std::optional<int64_t> v = r.ReadInt(keys[i], std::numeric_limits<int64_t>::min())) {
      if (*v < -kMaxExactInteger || *v > kMaxExactInteger) {
        r.Fail(Mismatch(r.PathOf(keys[i]), "an integer between -2^53 and 2^53", r.Get(keys[i])));
      }
      bounds[i] = static_cast<double>(*v);
    }
  }
  if (!r.ok()) return;
  if (*bounds[1] < *bounds[0]) {
    return r.Fail(Mismatch(r.PathOf("maxval"),
                           absl::StrCat(expected, " >= minval (", *bounds[0], ")"),
                           r.Get("maxval")));
  }
  space->minval = *bounds[0];
  space->maxval = *bounds[1];
}

// `count`, the number of grid points (only the grid searcher reads it).
void ReadCount(MapReader& r, HyperparameterSpace* space) {
  if (std::optional<int64_t> count = r.ReadInt("count", 1)) {
    space->count = static_cast<uint64_t>(*count);
  }
}

absl::StatusOr<HyperparameterSpace> ReadSpace(const YAML::Node& node, const std::string& path) {
  MapReader r(node, path, nullptr);
  const YAML::Node type = r.Get("type");
  const std::string type_name = IsPlainScalar(type) ? type.Scalar() : "";
  HyperparameterSpace space;
  if (type_name == "const") {
    space.kind = HyperparameterSpace::Kind::kConst;
    r.AllowKeys({"type", "val"});
    r.Require("val", "the constant's value");
    if (r.ok()) space.value = ToHyperparameterValue(r.Get("val"));
  } else if (type_name == "int" || type_name == "double") {
    space.kind =
        type_name == "int" ? HyperparameterSpace::Kind::kInt : HyperparameterSpace::Kind::kDouble;
    r.AllowKeys({"type", "minval", "maxval", "count"});
    ReadBounds(r, type_name == "int", &space);
    ReadCount(r, &space);
  } else if (type_name == "log") {
    space.kind = HyperparameterSpace::Kind::kLog;
    r.AllowKeys({"type", "minval", "maxval", "base", "count"});
    ReadBounds(r, /*integers=*/false, &space);
    if (std::optional<double> base = r.ReadNumber("base")) {
      // Base 1 makes every value 1, whatever the bounds.
      if (*base <= 0 || *base == 1) {
        r.Fail(Mismatch(r.PathOf("base"), "a number > 0 other than 1", r.Get("base")));
      }
      space.base = *base;
    }
    ReadCount(r, &space);
  } else if (type_name == "categorical") {
    space.kind = HyperparameterSpace::Kind::kCategorical;
    r.AllowKeys({"type", "vals"});
    const YAML::Node vals = r.Get("vals");
    if (r.ok() && (!vals.IsSequence() || vals.size() == 0)) {
      r.Fail(Mismatch(r.PathOf("vals"), "a non-empty list", vals));
    }
    if (r.ok()) {
      for (const YAML::Node& val : vals) space.vals.push_back(ToHyperparameterValue(val));
    }
  } else {
    r.Fail(Mismatch(r.PathOf("type"), "one of const, int, double, log, categorical", type));
  }
  if (!r.ok()) return r.status();
  return space;
}

absl::Status ReadGroup(const YAML::Node& group, const std::string& prefix, Spaces* spaces);

// One hyperparameter, or a group of them (a map without `type`) named `name`.
absl::Status ReadEntry(const YAML::Node& node, const std::string& name, Spaces* spaces) {
  if (node.IsMap() && !node["type"].IsDefined()) return ReadGroup(node, name, spaces);
  const std::string path = JoinPath("hyperparameters", name);
  HyperparameterSpace space;
  if (node.IsMap()) {
    absl::StatusOr<HyperparameterSpace> read = ReadSpace(node, path);
    if (!read.ok()) return read.status();
    space = *std::move(read);
  } else {
    space.value = ToHyperparameterValue(node);
  }
  if (!spaces->emplace(name, std::move(space)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": given twice; expected each hyperparameter name once"));
  }
  return absl::OkStatus();
}

absl::Status ReadGroup(const YAML::Node& group, const std::string& prefix, Spaces* spaces) {
  for (const auto& entry : group) {
    if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
      return Mismatch(JoinPath("hyperparameters", prefix), "hyperparameter names", entry.first);
    }
    absl::Status status = ReadEntry(entry.second, JoinPath(prefix, entry.first.Scalar()), spaces);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGridCounts(const Spaces& spaces) {
  for (const auto& [name, space] : spaces) {
    const bool ranged = space.kind == HyperparameterSpace::Kind::kInt ||
                        space.kind == HyperparameterSpace::Kind::kDouble ||
                        space.kind == HyperparameterSpace::Kind::kLog;
    if (ranged && !space.count) {
      return Mismatch(JoinPath(JoinPath("hyperparameters", name), "count"),
                      "an integer >= 1 (the grid searcher's number of points for this range)",
                      YAML::Node(YAML::NodeType::Undefined));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Spaces> ReadHyperparameterSpaces(const YAML::Node& section) {
  Spaces spaces;
  if (IsAbsent(section)) return spaces;
  if (!section.IsMap()) {
    return Mismatch("hyperparameters", "a map of names to values or search spaces", section);
  }
  absl::Status status = ReadGroup(section, "", &spaces);
  if (!status.ok()) return status;
  return spaces;
}

}  // namespace cohort::config_internal
