#include "runtime/config/yaml_quoting.h"

#include "absl/strings/str_format.h"

namespace cohort {

std::string QuotedYamlScalar(absl::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      quoted += absl::StrFormat("\\x%02x", byte);
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

}  // namespace cohort
