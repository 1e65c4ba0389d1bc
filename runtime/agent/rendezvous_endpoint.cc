#include "runtime/agent/rendezvous_endpoint.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

constexpr absl::string_view kTcp = "tcp://";

struct HostAndPort {
  absl::string_view host;
  absl::string_view port;
};

// "tcp://HOST:PORT" split at its last colon (an IPv6 host keeps its brackets and colons).
std::optional<HostAndPort> SplitTcp(absl::string_view endpoint) {
  if (!absl::StartsWith(endpoint, kTcp)) return std::nullopt;
  endpoint.remove_prefix(kTcp.size());
  const size_t colon = endpoint.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return std::nullopt;
  }
  return HostAndPort{endpoint.substr(0, colon), endpoint.substr(colon + 1)};
}

bool IsWildcard(absl::string_view host) {
  return host == "*" || host == "0.0.0.0" || host == "[::]" || host == "::";
}

}  // namespace

std::string ReachableRendezvousEndpoint(absl::string_view rendezvous,
                                        absl::string_view orchestrator) {
  const std::optional<HostAndPort> meet = SplitTcp(rendezvous);
  const std::optional<HostAndPort> reached = SplitTcp(orchestrator);
  if (!meet || !reached || !IsWildcard(meet->host) || IsWildcard(reached->host)) {
    return std::string(rendezvous);
  }
  return absl::StrCat(kTcp, reached->host, ":", meet->port);
}

}  // namespace cohort
