#include "runtime/collective/gloo/gloo_call.h"

#include <exception>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gloo/common/error.h"
#include "gloo/common/logging.h"
#include "runtime/collective/gloo/gloo_store.h"

namespace cohort {
namespace {

absl::Status Failure(absl::StatusCode code, absl::string_view what, absl::string_view why) {
  return absl::Status(code, absl::StrCat(what, ": ", why));
}

}  // namespace

absl::Status CallGloo(absl::string_view what, absl::FunctionRef<void()> call) noexcept {
  try {
    call();
    return absl::OkStatus();
  } catch (const GlooStoreError& e) {
    return Failure(e.status().code(), what, e.status().message());
  } catch (const gloo::IoException& e) {
    const bool timed_out = absl::StrContains(absl::AsciiStrToLower(e.what()), "timed out");
    return Failure(timed_out ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable,
                   what, e.what());
  } catch (const gloo::EnforceNotMet& e) {
    return Failure(absl::StatusCode::kInternal, what, e.what());
  } catch (const std::exception& e) {
    return Failure(absl::StatusCode::kInternal, what, e.what());
  } catch (...) {
    return Failure(absl::StatusCode::kInternal, what, "unknown exception");
  }
}

}  // namespace cohort
