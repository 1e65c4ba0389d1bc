#include "runtime/control/endpoint_text.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {

absl::Status CheckEndpointText(absl::string_view flag, absl::string_view endpoint) {
  if (absl::StrContains(endpoint, "://")) return absl::OkStatus();
  const bool host_and_port = absl::StrContains(endpoint, ':') && !endpoint.empty();
  return absl::InvalidArgumentError(absl::StrCat(
      flag, " '", endpoint, "' is not a ZeroMQ endpoint (transport://address, such as ",
      host_and_port ? absl::StrCat("tcp://", endpoint, ")") : "tcp://0.0.0.0:29400)"));
}

}  // namespace cohort
