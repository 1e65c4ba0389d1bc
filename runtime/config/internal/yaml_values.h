// How the experiment config reads YAML values: scalar typing, text for error messages, emission.
//
// A scalar is typed only when it is plain (unquoted, untagged): `3` is an int, `'3'` a string.
// Numbers are decimal only (no hex, no .inf/.nan); booleans are true/false/yes/no/on/off in
// lower, Capitalised or UPPER case, as YAML 1.1 and so Determined's Python loader read them.
//
//   YAML::Node node = YAML::Load("{minutes: 3}");
//   DescribeNode(node);   // "{minutes: 3}"
//   PlainInt(YAML::Load("-2"));  // -2
//
// Thread-safety: stateless functions; YAML nodes must not be shared across threads.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_YAML_VALUES_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_YAML_VALUES_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/plugin/hyperparameters.h"

namespace cohort::config_internal {

// Absent (undefined) or null: the field takes its default.
bool IsAbsent(const YAML::Node& node);
// An unquoted, untagged scalar: the only kind that reads as a number, a boolean or null.
bool IsPlainScalar(const YAML::Node& node);

std::optional<int64_t> PlainInt(const YAML::Node& node);
// A plain whole number too wide for 64 bits ("99999999999999999999"), which PlainInt cannot read.
bool IsTooWideInt(const YAML::Node& node);
std::optional<double> PlainNumber(const YAML::Node& node);  // ints too; finite only
std::optional<bool> PlainBool(const YAML::Node& node);

// A hyperparameter value: plain scalars typed (int, double, bool), other scalars as strings,
// lists, maps and null as Hyperparameters::Other holding their flow-style YAML text.
Hyperparameters::Value ToHyperparameterValue(const YAML::Node& node);

// How error messages show what they got: `-2`, `'often'`, `{minutes: 3}`, `null`; long text is
// cut to about 80 characters.
std::string DescribeNode(const YAML::Node& node);

// One-line flow-style YAML (`{a: 1, b: [x, y]}`), and block-style YAML for a whole document. Both
// keep quoted scalars quoted, so re-reading the text types every value as before.
std::string EmitFlow(const YAML::Node& node);
std::string EmitBlock(const YAML::Node& node);

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_YAML_VALUES_H_
