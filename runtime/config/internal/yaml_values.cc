#include "runtime/config/internal/yaml_values.h"

#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cohort::config_internal {
namespace {

constexpr size_t kMaxDescriptionLength = 80;

// Digits with at most the characters of a decimal number around them; keeps absl's parsers from
// accepting hex, "inf" or surrounding spaces.
bool LooksDecimal(absl::string_view text, absl::string_view extra_chars) {
  bool has_digit = false;
  for (char c : text) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      has_digit = true;
    } else if (extra_chars.find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return has_digit;
}

void Emit(YAML::Emitter& out, const YAML::Node& node, bool flow) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (flow || node.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& entry : node) {
        out << YAML::Key;
        Emit(out, entry.first, flow);
        out << YAML::Value;
        Emit(out, entry.second, flow);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      if (flow || node.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : node) Emit(out, item, flow);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      if (!IsPlainScalar(node)) out << YAML::DoubleQuoted;
      out << node.Scalar();
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out << YAML::Null;
      break;
  }
}

std::string EmitWith(const YAML::Node& node, bool flow) {
  YAML::Emitter out;
  Emit(out, node, flow);
  return out.c_str();
}

}  // namespace

bool IsAbsent(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

bool IsPlainScalar(const YAML::Node& node) {
  // "?" is the parser's mark for an untagged plain scalar; keys created by overrides have none.
  return node.IsScalar() && (node.Tag() == "?" || node.Tag().empty());
}

std::optional<int64_t> PlainInt(const YAML::Node& node) {
  int64_t value = 0;
  if (!IsPlainScalar(node) || !LooksDecimal(node.Scalar(), "+-") ||
      !absl::SimpleAtoi(node.Scalar(), &value)) {
    return std::nullopt;
  }
  return value;
}

bool IsTooWideInt(const YAML::Node& node) {
  return IsPlainScalar(node) && LooksDecimal(node.Scalar(), "+-") && !PlainInt(node);
}

std::optional<double> PlainNumber(const YAML::Node& node) {
  double value = 0;
  if (!IsPlainScalar(node) || !LooksDecimal(node.Scalar(), "+-.eE") ||
      !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> PlainBool(const YAML::Node& node) {
  if (!IsPlainScalar(node)) return std::nullopt;
  static const std::set<std::string, std::less<>> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                           "YES",  "on",   "On",   "ON"};
  static const std::set<std::string, std::less<>> kFalse = {"false", "False", "FALSE", "no", "No",
                                                            "NO",    "off",   "Off",   "OFF"};
  if (kTrue.count(node.Scalar()) != 0) return true;
  if (kFalse.count(node.Scalar()) != 0) return false;
  return std::nullopt;
}

Hyperparameters::Value ToHyperparameterValue(const YAML::Node& node) {
  if (!node.IsScalar()) return Hyperparameters::Other{EmitFlow(node)};
  if (std::optional<int64_t> i = PlainInt(node)) return *i;
  if (std::optional<double> d = PlainNumber(node)) return *d;
  if (std::optional<bool> b = PlainBool(node)) return *b;
  return node.Scalar();
}

std::string DescribeNode(const YAML::Node& node) {
  std::string text;
  if (!node.IsDefined()) {
    text = "nothing";
  } else if (node.IsNull()) {
    text = "null";
  } else if (!node.IsScalar()) {
    text = EmitFlow(node);
  } else if (PlainNumber(node) || PlainBool(node)) {
    text = node.Scalar();
  } else {
    text = absl::StrCat("'", node.Scalar(), "'");
  }
  if (text.size() > kMaxDescriptionLength) {
    text = absl::StrCat(text.substr(0, kMaxDescriptionLength - 3), "...");
  }
  return text;
}

std::string EmitFlow(const YAML::Node& node) { return EmitWith(node, /*flow=*/true); }

std::string EmitBlock(const YAML::Node& node) { return EmitWith(node, /*flow=*/false); }

}  // namespace cohort::config_internal
