// QuotedYamlScalar: any text as a YAML double-quoted scalar, for writing a string into YAML or
// into a `--set PATH=VALUE` override, where an unquoted value could read back as a number, a
// bool, null, a list or a map.
//
//   QuotedYamlScalar("mnist \"v2\"")  // "\"mnist \\\"v2\\\"\""
//   overrides.push_back(absl::StrCat("name=", QuotedYamlScalar(config.name)));
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_CONFIG_YAML_QUOTING_H_
#define COHORT_RUNTIME_CONFIG_YAML_QUOTING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cohort {

// `text` between double quotes, with `"` and `\` escaped and every control character (newlines
// and NUL included) written as an escape, so a YAML parser reads back exactly `text`, a string.
// Other bytes, UTF-8 included, are copied as they are.
std::string QuotedYamlScalar(absl::string_view text);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONFIG_YAML_QUOTING_H_
