#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/config/experiment_config.h"
#include "runtime/plugin/hyperparameters.h"

namespace cohort {
namespace {

// A value as a YAML flow would write it, its type kept: 16, 16.0, "16", true, [1, 2].
struct FlowValue {
  std::string operator()(int64_t v) const { return absl::StrCat(v); }
  std::string operator()(double v) const { return YamlDoubleText(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const { return absl::StrCat("\"", v, "\""); }
  std::string operator()(const Hyperparameters::Other& v) const { return v.text; }
};

// A bound as written: an int range's without a fraction.
std::string Bound(double v, bool integer) {
  return integer ? absl::StrCat(static_cast<int64_t>(v)) : FlowValue{}(v);
}

}  // namespace

std::string DescribeSpace(const HyperparameterSpace& space) {
  using Kind = HyperparameterSpace::Kind;
  if (space.kind == Kind::kConst) return std::visit(FlowValue{}, space.value);
  if (space.kind == Kind::kCategorical) {
    std::vector<std::string> vals;
    for (const Hyperparameters::Value& value : space.vals) {
      vals.push_back(std::visit(FlowValue{}, value));
    }
    return absl::StrCat("{type: categorical, vals: [", absl::StrJoin(vals, ", "), "]}");
  }
  const bool integer = space.kind == Kind::kInt;
  std::string text = absl::StrCat("{type: ",
                                  integer                       ? "int"
                                  : space.kind == Kind::kDouble ? "double"
                                                                : "log",
                                  ", minval: ", Bound(space.minval, integer),
                                  ", maxval: ", Bound(space.maxval, integer));
  if (space.kind == Kind::kLog) absl::StrAppend(&text, ", base: ", FlowValue{}(space.base));
  if (space.count) absl::StrAppend(&text, ", count: ", *space.count);
  return absl::StrCat(text, "}");
}

}  // namespace cohort
