#include "runtime/base/permanent_failure.h"

#include "absl/strings/cord.h"

namespace cohort {
namespace {

constexpr char kPermanentPayload[] = "cohort.dev/permanent-failure";

}  // namespace

absl::Status PermanentFailure(absl::Status status) {
  status.SetPayload(kPermanentPayload, absl::Cord("1"));
  return status;
}

bool IsPermanentFailure(const absl::Status& status) {
  if (status.ok()) return false;
  return status.GetPayload(kPermanentPayload).has_value() ||
         status.code() == absl::StatusCode::kResourceExhausted;
}

}  // namespace cohort
