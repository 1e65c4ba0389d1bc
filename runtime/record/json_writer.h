// JsonWriter: builds one JSON value as text, for the run folder's experiment.json and
// metrics.jsonl. Strings are escaped; a non-finite number is written as null (JSON has no NaN).
//
//   JsonWriter json;
//   json.BeginObject();
//   json.Field("batches", uint64_t{100});
//   json.Key("metrics"); json.BeginObject(); json.Key("loss"); json.Number(0.25); json.EndObject();
//   json.EndObject();
//   json.text();   // {"batches":100,"metrics":{"loss":0.25}}
//
// The caller keeps the nesting right; commas are inserted here.
#ifndef COHORT_RUNTIME_RECORD_JSON_WRITER_H_
#define COHORT_RUNTIME_RECORD_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cohort {

class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(absl::string_view key);
  void String(absl::string_view value);
  void Number(double value);
  void Integer(uint64_t value);
  void Bool(bool value);
  void Null();
  // A value that is already JSON text, written as it is.
  void Raw(absl::string_view json);

  // Key and value in one call.
  void Field(absl::string_view key, absl::string_view value) {
    Key(key);
    String(value);
  }
  void Field(absl::string_view key, const char* value) {
    Key(key);
    String(value);
  }
  void Field(absl::string_view key, uint64_t value) {
    Key(key);
    Integer(value);
  }
  void Field(absl::string_view key, double value) {
    Key(key);
    Number(value);
  }
  void Field(absl::string_view key, bool value) {
    Key(key);
    Bool(value);
  }

  const std::string& text() const { return text_; }

 private:
  void BeforeValue();

  std::string text_;
  std::vector<bool> first_in_scope_{true};
  bool after_key_ = false;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_RECORD_JSON_WRITER_H_
