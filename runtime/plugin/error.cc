#include "runtime/plugin/error.h"

#include <string>
#include <utility>

namespace cohort {

cohort_error* NewError(absl::Status status) { return new cohort_error{std::move(status)}; }

absl::Status TakeError(cohort_error* error) {
  if (error == nullptr) return absl::OkStatus();
  absl::Status status = std::move(error->status);
  delete error;
  return status;
}

cohort_error* ErrorCreate(cohort_status_code code, const char* message, size_t message_len) {
  // An OK or out-of-range code would make an "error" that means success: report it as UNKNOWN.
  const bool valid = code > 0 && code <= static_cast<int>(absl::StatusCode::kUnauthenticated);
  const absl::StatusCode status_code =
      valid ? static_cast<absl::StatusCode>(code) : absl::StatusCode::kUnknown;
  std::string text = message == nullptr ? std::string() : std::string(message, message_len);
  if (text.empty()) text = "(the plugin gave no message)";
  return NewError(absl::Status(status_code, text));
}

void ErrorDestroy(cohort_error* error) { delete error; }

cohort_status_code ErrorCode(const cohort_error* error) {
  return static_cast<cohort_status_code>(error->status.code());
}

void ErrorMessage(const cohort_error* error, const char** message, size_t* message_len) {
  const absl::string_view text = error->status.message();
  *message = text.data();
  *message_len = text.size();
}

}  // namespace cohort
