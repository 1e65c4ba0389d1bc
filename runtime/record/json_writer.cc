#include "runtime/record/json_writer.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cohort {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_in_scope_.back()) text_ += ',';
  first_in_scope_.back() = false;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  text_ += '{';
  first_in_scope_.push_back(true);
}

void JsonWriter::EndObject() {
  first_in_scope_.pop_back();
  text_ += '}';
}

void JsonWriter::BeginArray() {
  BeforeValue();
  text_ += '[';
  first_in_scope_.push_back(true);
}

void JsonWriter::EndArray() {
  first_in_scope_.pop_back();
  text_ += ']';
}

void JsonWriter::Key(absl::string_view key) {
  String(key);
  text_ += ':';
  after_key_ = true;
}

void JsonWriter::String(absl::string_view value) {
  BeforeValue();
  text_ += '"';
  for (const char c : value) {
    switch (c) {
      case '"':
        text_ += "\\\"";
        break;
      case '\\':
        text_ += "\\\\";
        break;
      case '\n':
        text_ += "\\n";
        break;
      case '\r':
        text_ += "\\r";
        break;
      case '\t':
        text_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&text_, "\\u%04x", static_cast<unsigned>(c));
        } else {
          text_ += c;
        }
    }
  }
  text_ += '"';
}

void JsonWriter::Number(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    text_ += "null";
  } else {
    // The shortest of %.15g and %.17g that reads back as the same double.
    std::string shorter = absl::StrFormat("%.15g", value);
    text_ +=
        std::strtod(shorter.c_str(), nullptr) == value ? shorter : absl::StrFormat("%.17g", value);
  }
}

void JsonWriter::Integer(uint64_t value) {
  BeforeValue();
  absl::StrAppend(&text_, value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  text_ += value ? "true" : "false";
}

void JsonWriter::Raw(absl::string_view json) {
  BeforeValue();
  text_.append(json.data(), json.size());
}

void JsonWriter::Null() {
  BeforeValue();
  text_ += "null";
}

}  // namespace cohort
