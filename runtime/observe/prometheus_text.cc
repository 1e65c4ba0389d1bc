#include "runtime/observe/prometheus_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cohort {
namespace {

// Backslash and newline escaped, and double quotes too in a label value (not in help text).
std::string Escape(absl::string_view text, bool quotes) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\' || (quotes && c == '"')) {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return absl::StrFormat("%.17g", value);
}

}  // namespace

void PrometheusText::Gauge(absl::string_view name, absl::string_view help, double value,
                           const Labels& labels) {
  Sample("gauge", name, help, value, labels);
}

void PrometheusText::Counter(absl::string_view name, absl::string_view help, double value,
                             const Labels& labels) {
  Sample("counter", name, help, value, labels);
}

void PrometheusText::Sample(absl::string_view type, absl::string_view name, absl::string_view help,
                            double value, const Labels& labels) {
  if (families_.insert(std::string(name)).second) {
    absl::StrAppend(&text_, "# HELP ", name, " ", Escape(help, /*quotes=*/false), "\n# TYPE ", name,
                    " ", type, "\n");
  }
  absl::StrAppend(&text_, name);
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      absl::StrAppend(&text_, i == 0 ? "" : ",", labels[i].first, "=\"",
                      Escape(labels[i].second, /*quotes=*/true), "\"");
    }
    text_ += '}';
  }
  absl::StrAppend(&text_, " ", FormatValue(value), "\n");
}

}  // namespace cohort
