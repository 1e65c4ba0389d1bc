#include "runtime/plugin/hyperparameters.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

// YAML's null as an Other's text: `~` (as YAML writes it), or the words YAML reads as null.
bool IsNullText(absl::string_view text) {
  return text == "~" || text == "null" || text == "Null" || text == "NULL";
}

struct Describer {
  std::string operator()(int64_t v) const { return absl::StrCat("an int (", v, ")"); }
  std::string operator()(double v) const {
    return absl::StrCat("a double (", YamlDoubleText(v), ")");
  }
  std::string operator()(bool v) const {
    return absl::StrCat("a bool (", v ? "true" : "false", ")");
  }
  std::string operator()(const std::string& v) const {
    return absl::StrCat("a string (\"", v, "\")");
  }
  std::string operator()(const Hyperparameters::Other& v) const {
    if (IsNullText(v.text)) return "null";
    return absl::StrCat("a list or map (", v.text, ")");
  }
};

// A value as YAML writes it.
struct TextOf {
  std::string operator()(int64_t v) const { return absl::StrCat(v); }
  std::string operator()(double v) const { return YamlDoubleText(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const { return v; }
  std::string operator()(const Hyperparameters::Other& v) const { return v.text; }
};

absl::Status WrongType(absl::string_view name, const Hyperparameters::Value& value,
                       absl::string_view wanted) {
  return absl::InvalidArgumentError(
      absl::StrCat("hyperparameter '", name, "' is ", DescribeValue(value), ", not ", wanted));
}

}  // namespace

std::string YamlDoubleText(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buffer[64];
  const std::to_chars_result written = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, written.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // 16.0, not 16
  return text;
}

std::string DescribeValue(const Hyperparameters::Value& value) {
  return std::visit(Describer{}, value);
}

absl::StatusOr<const Hyperparameters::Value*> Hyperparameters::Find(absl::string_view name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return &it->second;
  std::string known = values_.empty() ? "none" : "";
  for (const auto& [key, value] : values_) absl::StrAppend(&known, known.empty() ? "" : ", ", key);
  return absl::NotFoundError(
      absl::StrCat("hyperparameter '", name, "' is not set; the trial has: ", known));
}

bool Hyperparameters::IsNull(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  const auto* other = std::get_if<Other>(&it->second);
  return other != nullptr && IsNullText(other->text);
}

cohort_hparam_type Hyperparameters::TypeOf(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return COHORT_HPARAM_ABSENT;
  switch (it->second.index()) {
    case 0:
      return COHORT_HPARAM_INT;
    case 1:
      return COHORT_HPARAM_DOUBLE;
    case 2:
      return COHORT_HPARAM_BOOL;
    case 3:
      return COHORT_HPARAM_STRING;
    default:
      return COHORT_HPARAM_OTHER;
  }
}

absl::StatusOr<int64_t> Hyperparameters::GetInt(absl::string_view name) const {
  absl::StatusOr<const Value*> v = Find(name);
  if (!v.ok()) return v.status();
  if (const int64_t* i = std::get_if<int64_t>(*v)) return *i;
  return WrongType(name, **v, "an int");
}

absl::StatusOr<double> Hyperparameters::GetDouble(absl::string_view name) const {
  absl::StatusOr<const Value*> v = Find(name);
  if (!v.ok()) return v.status();
  if (const double* d = std::get_if<double>(*v)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(*v)) return static_cast<double>(*i);
  return WrongType(name, **v, "a double");
}

absl::StatusOr<bool> Hyperparameters::GetBool(absl::string_view name) const {
  absl::StatusOr<const Value*> v = Find(name);
  if (!v.ok()) return v.status();
  if (const bool* b = std::get_if<bool>(*v)) return *b;
  return WrongType(name, **v, "a bool");
}

absl::StatusOr<const std::string*> Hyperparameters::GetString(absl::string_view name) const {
  absl::StatusOr<const Value*> v = Find(name);
  if (!v.ok()) return v.status();
  if (const std::string* s = std::get_if<std::string>(*v)) return s;
  return WrongType(name, **v, "a string");
}

absl::StatusOr<std::string> Hyperparameters::GetText(absl::string_view name) const {
  absl::StatusOr<const Value*> v = Find(name);
  if (!v.ok()) return v.status();
  return std::visit(TextOf{}, **v);
}

}  // namespace cohort
