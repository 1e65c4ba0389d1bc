#include "runtime/base/collective_failure.h"

#include "absl/strings/cord.h"
#include "runtime/base/permanent_failure.h"

namespace cohort {
namespace {

constexpr char kCollectivePayload[] = "cohort.dev/collective-failure";

}  // namespace

absl::Status CollectiveFailure(const absl::Status& cause, absl::string_view message) {
  absl::Status failure(cause.code(), message);
  cause.ForEachPayload([&failure](absl::string_view url, const absl::Cord& payload) {
    failure.SetPayload(url, payload);
  });
  if (!IsPermanentFailure(failure)) failure.SetPayload(kCollectivePayload, absl::Cord("1"));
  return failure;
}

bool IsCollectiveFailure(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kCollectivePayload).has_value();
}

}  // namespace cohort
