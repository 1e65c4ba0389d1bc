// The decision half of a ZAP handler (ZeroMQ's authentication protocol, RFC 27): one request in,
// one reply out, no sockets. CurveAuthenticator carries the frames to and from ZeroMQ.
//
// A CURVE client whose public key is authorized gets status 200 with its name as User-Id, which
// ZeroMQ then attaches to every message from that connection. Everything else is refused: an
// unknown key or another mechanism (NULL, PLAIN) with 400 and a line saying who was refused; a
// malformed request with 500.
//
//   ZapAnswer answer = AnswerZapRequest(request_frames, keys);
//   if (answer.refusal) log(*answer.refusal);
//   SendFrames(zap_socket, answer.reply);
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_SECURITY_ZAP_ANSWER_H_
#define COHORT_RUNTIME_SECURITY_ZAP_ANSWER_H_

#include <optional>
#include <string>
#include <vector>

#include "runtime/security/authorized_keys.h"

namespace cohort {

struct ZapAnswer {
  // The reply frames: version, request id, status code, status text, user id, metadata.
  std::vector<std::string> reply;
  // For a refusal: "refused CURVE client <z85 key> from 10.0.0.5: its key is not authorized".
  std::optional<std::string> refusal;
};

// `request` holds the frames of one ZAP request: version "1.0", request id, domain, address,
// routing id, mechanism, credentials...
ZapAnswer AnswerZapRequest(const std::vector<std::string>& request, const AuthorizedKeys& keys);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_ZAP_ANSWER_H_
