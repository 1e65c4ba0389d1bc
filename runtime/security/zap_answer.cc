#include "runtime/security/zap_answer.h"

#include <zmq.h>

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

// Frame positions of a ZAP request (RFC 27).
enum ZapFrame : size_t {
  kVersion,
  kRequestId,
  kDomain,
  kAddress,
  kRoutingId,
  kMechanism,
  kFirstCredential
};

constexpr size_t kBinaryKeyBytes = 32;

ZapAnswer Reply(const std::vector<std::string>& request, absl::string_view code,
                absl::string_view text, absl::string_view user_id) {
  const std::string request_id = request.size() > kRequestId ? request[kRequestId] : "";
  return ZapAnswer{
      {"1.0", request_id, std::string(code), std::string(text), std::string(user_id), ""},
      std::nullopt};
}

ZapAnswer Refuse(const std::vector<std::string>& request, absl::string_view code,
                 absl::string_view text, std::string line) {
  ZapAnswer answer = Reply(request, code, text, "");
  answer.refusal = std::move(line);
  return answer;
}

}  // namespace

ZapAnswer AnswerZapRequest(const std::vector<std::string>& request, const AuthorizedKeys& keys) {
  if (request.size() < kFirstCredential || request[kVersion] != "1.0") {
    return Refuse(
        request, "500", "malformed ZAP request",
        absl::StrCat("refused a connection: malformed ZAP request of ", request.size(), " frames"));
  }
  const std::string& address = request[kAddress];
  const std::string& mechanism = request[kMechanism];
  if (mechanism != "CURVE") {
    return Refuse(request, "400", "CURVE required",
                  absl::StrCat("refused a ", absl::CEscape(mechanism), " client from ", address,
                               ": only CURVE clients are accepted"));
  }
  if (request.size() != kFirstCredential + 1 ||
      request[kFirstCredential].size() != kBinaryKeyBytes) {
    return Refuse(request, "500", "malformed CURVE credentials",
                  absl::StrCat("refused a CURVE client from ", address, ": malformed credentials"));
  }
  char z85[kCurveKeyLength + 1];
  zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(request[kFirstCredential].data()),
                 kBinaryKeyBytes);
  if (const std::string* name = keys.NameOf(z85)) return Reply(request, "200", "OK", *name);
  return Refuse(
      request, "400", "unknown key",
      absl::StrCat("refused CURVE client ", z85, " from ", address, ": its key is not authorized"));
}

}  // namespace cohort
