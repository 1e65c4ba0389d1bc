#include "runtime/security/curve_client.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace cohort {

absl::Status ConfigureCurveClient(zmq::socket_t& socket, const CurveKeyPair& client_keys,
                                  absl::string_view server_public_key) {
  if (!IsCurveKey(server_public_key)) {
    return absl::InvalidArgumentError(
        "the server's public key is not a CURVE key (40 characters of Z85)");
  }
  absl::StatusOr<std::string> derived = CurvePublicKeyOf(client_keys.secret_key);
  if (!derived.ok())
    return absl::InvalidArgumentError("the client's secret key is not a CURVE key");
  if (*derived != client_keys.public_key) {
    return absl::InvalidArgumentError("the client's public key does not belong to its secret key");
  }
  try {
    // Options reach only connections made later.
    if (!socket.get(zmq::sockopt::last_endpoint).empty()) {
      return absl::FailedPreconditionError(
          "a socket must be made a CURVE client before it connects");
    }
    socket.set(zmq::sockopt::curve_serverkey, std::string(server_public_key));
    socket.set(zmq::sockopt::curve_publickey, client_keys.public_key);
    socket.set(zmq::sockopt::curve_secretkey, client_keys.secret_key);
  } catch (const zmq::error_t& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot make a CURVE client socket: ", error.what()));
  }
  return absl::OkStatus();
}

}  // namespace cohort
