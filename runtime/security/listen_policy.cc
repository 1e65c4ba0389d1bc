#include "runtime/security/listen_policy.h"

#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

// A dotted IPv4 address in 127.0.0.0/8, each part a plain decimal 0..255.
bool IsIpv4Loopback(absl::string_view host) {
  std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  if (parts.size() != 4 || parts[0] != "127") return false;
  for (absl::string_view part : parts) {
    uint32_t value = 0;
    if (part.empty() || part.size() > 3 || !absl::SimpleAtoi(part, &value) || value > 255)
      return false;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
    }
  }
  return true;
}

}  // namespace

bool IsLocalEndpoint(absl::string_view endpoint) {
  if (absl::StartsWith(endpoint, "ipc://") || absl::StartsWith(endpoint, "inproc://")) return true;
  if (!absl::ConsumePrefix(&endpoint, "tcp://")) return false;
  // tcp://HOST:PORT, where HOST may be [IPv6]; the port is last.
  const size_t colon = endpoint.rfind(':');
  if (colon == absl::string_view::npos) return false;
  const absl::string_view host = endpoint.substr(0, colon);
  return host == "[::1]" || host == "localhost" || IsIpv4Loopback(host);
}

bool CurveRequired(absl::string_view endpoint, CurvePolicy policy) {
  return policy == CurvePolicy::kAlways || !IsLocalEndpoint(endpoint);
}

}  // namespace cohort
