// MapReader: reads one YAML map of the experiment config at a dotted path, field by field.
//
// Errors are sticky: the first one is kept and later reads do nothing, so a section reads as a
// list of fields followed by one status check. Every error is INVALID_ARGUMENT and names the field
// path, what is allowed and what was found:
//
//   MapReader r(root["optimizations"], "optimizations", &ignored_keys);
//   r.AllowKeys({"aggregation_frequency", "mixed_precision"}, {"grad_updates_size_file"});
//   r.Int("aggregation_frequency", 1, &out.aggregation_frequency);
//   r.Choice("mixed_precision", {"O0", "O1", "O2", "O3"}, &out.mixed_precision);
//   if (!r.ok()) return r.status();
//   // "optimizations.aggregation_frequency: expected an integer >= 1; got 'often'"
//
// Reads leave their output alone when the key is absent or null (Determined's "use the default").
//
// Thread-safety: one reader per thread.
#ifndef COHORT_RUNTIME_CONFIG_INTERNAL_MAP_READER_H_
#define COHORT_RUNTIME_CONFIG_INTERNAL_MAP_READER_H_

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/config/experiment_config.h"

namespace cohort::config_internal {

// "<path>: expected <expected>; got <node as written>".
absl::Status Mismatch(absl::string_view path, absl::string_view expected, const YAML::Node& got);
// "a" + "b" -> "a.b"; "" + "b" -> "b".
std::string JoinPath(absl::string_view parent, absl::string_view key);

class MapReader {
 public:
  // `node` is the value found at `path`: a map, or absent/null for an empty section. Keys Cohort
  // accepts without using are appended to `ignored_keys` by AllowKeys.
  MapReader(YAML::Node node, std::string path, std::vector<std::string>* ignored_keys);

  // Checks every key once: `used` keys are read by the caller, `ignored` keys (Determined's, not
  // used by Cohort) are recorded as "<path>.<key>"; any other key, and any key given twice, is an
  // error naming it and the nearest allowed key.
  void AllowKeys(absl::Span<const absl::string_view> used,
                 absl::Span<const absl::string_view> ignored = {});

  // An integer in [min, max]; nullopt when absent or on error.
  std::optional<int64_t> ReadInt(absl::string_view key, int64_t min,
                                 int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<double> ReadNumber(absl::string_view key);
  std::optional<bool> ReadBool(absl::string_view key);
  // Any scalar, as written.
  std::optional<std::string> ReadString(absl::string_view key);

  template <class T>
  void Int(absl::string_view key, int64_t min, T* out) {
    if (std::optional<int64_t> v = ReadInt(key, min, MaxOf<T>())) *out = static_cast<T>(*v);
  }
  template <class T>
  void Int(absl::string_view key, int64_t min, std::optional<T>* out) {
    if (std::optional<int64_t> v = ReadInt(key, min, MaxOf<T>())) *out = static_cast<T>(*v);
  }
  void Bool(absl::string_view key, bool* out);
  void String(absl::string_view key, std::string* out);
  void Choice(absl::string_view key, absl::Span<const absl::string_view> allowed, std::string* out);
  // One of the policy's names (PolicyNames), as its value.
  template <class Policy>
  void PolicyChoice(absl::string_view key, Policy* out) {
    const auto& names = PolicyNames<Policy>::kNames;
    std::string name(PolicyName(*out));
    Choice(key, names, &name);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) *out = static_cast<Policy>(i);
    }
  }
  // Accepts only the `supported` values. A value in `determined_only` is valid in Determined, so
  // its error says Cohort does not support that `kind` (e.g. "searcher") and why (`reason`, which
  // may be empty).
  void SupportedChoice(absl::string_view key, std::initializer_list<absl::string_view> supported,
                       std::initializer_list<absl::string_view> determined_only,
                       absl::string_view kind, absl::string_view reason, std::string* out);
  // A length of at least `min_value` units (see length_reader.h).
  void LengthField(absl::string_view key, uint64_t min_value, std::optional<Length>* out);
  void LengthField(absl::string_view key, uint64_t min_value, Length* out);

  // An error unless the key is present and not null.
  void Require(absl::string_view key, absl::string_view expected);

  bool Has(absl::string_view key) const { return !IsAbsentKey(key); }
  // The value at `key`; an undefined node when absent or when this is not a map.
  YAML::Node Get(absl::string_view key) const;
  std::string PathOf(absl::string_view key) const { return JoinPath(path_, key); }
  const std::string& path() const { return path_; }

  // Records `status` unless an error is already kept.
  void Fail(absl::Status status);
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  template <class T>
  static int64_t MaxOf() {
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(), kMax));
  }
  bool IsAbsentKey(absl::string_view key) const;

  YAML::Node node_;
  std::string path_;
  std::vector<std::string>* ignored_keys_;
  absl::Status status_;
};

}  // namespace cohort::config_internal

#endif  // COHORT_RUNTIME_CONFIG_INTERNAL_MAP_READER_H_
