// Hyperparameters: a trial's named values as a plugin reads them through the SDK's typed getters.
//
// Values are int, double, bool or string; anything else (a list or a map from the experiment
// config) is kept as "other" with its text, visible to hparam_type but not readable as a scalar.
// An int reads as a double; no other conversion happens. Errors name the hyperparameter:
//
//   Hyperparameters hp;
//   hp.Set("learning_rate", 0.1);
//   hp.GetDouble("learning_rate");  // 0.1
//   hp.GetInt("learning_rate");     // INVALID_ARGUMENT: hyperparameter 'learning_rate' is a
//                                   // double (0.1), not an int
//
// Thread-safety: const methods may be called concurrently.
#ifndef COHORT_RUNTIME_PLUGIN_HYPERPARAMETERS_H_
#define COHORT_RUNTIME_PLUGIN_HYPERPARAMETERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cohort/plugin.h"

namespace cohort {

class Hyperparameters {
 public:
  // A list or map value, kept as text.
  struct Other {
    std::string text;
  };
  using Value = std::variant<int64_t, double, bool, std::string, Other>;

  // Any integer is stored as an int, any floating-point number as a double, text as a string.
  template <class T>
  void Set(std::string name, T value) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Value> || std::is_same_v<T, Other>) {
      values_[std::move(name)] = Value(std::move(value));
    } else if constexpr (std::is_integral_v<T>) {
      values_[std::move(name)] = Value(static_cast<int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      values_[std::move(name)] = Value(static_cast<double>(value));
    } else {
      values_[std::move(name)] = Value(std::string(std::move(value)));
    }
  }

  cohort_hparam_type TypeOf(absl::string_view name) const;
  // Whether `name` is set to null (`~`, or `--set name=`), which means its default wherever a
  // default exists.
  bool IsNull(absl::string_view name) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name) const;
  absl::StatusOr<double> GetDouble(absl::string_view name) const;
  absl::StatusOr<bool> GetBool(absl::string_view name) const;
  // The reference stays valid until the value is replaced or the object destroyed.
  absl::StatusOr<const std::string*> GetString(absl::string_view name) const;
  // Any value as YAML text (hparam_text, SDK 1.5): an Other's flow-style text, a string as it
  // is, a number (a double in its shortest round-trip form) or a bool as YAML writes it.
  absl::StatusOr<std::string> GetText(absl::string_view name) const;

  const std::map<std::string, Value, std::less<>>& values() const { return values_; }

 private:
  absl::StatusOr<const Value*> Find(absl::string_view name) const;

  std::map<std::string, Value, std::less<>> values_;
};

// "an int (3)", "a double (16.0)", "a string (\"adam\")": how error messages show a value.
std::string DescribeValue(const Hyperparameters::Value& value);

// A double as YAML writes it, its type kept: the shortest text that reads back as the same
// double, with ".0" where it would read as an int (16.0, 0.1, 1e-08), and YAML's .inf, -.inf and
// .nan.
std::string YamlDoubleText(double value);

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_HYPERPARAMETERS_H_
