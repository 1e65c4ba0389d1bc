// CurveClientConfig: what an agent or a client needs to reach a CURVE server: its own key pair
// (with the name it was made under) and the server's public key. Loaded from the two command
// line values every such program takes, `--key FILE` and `--orchestrator-key FILE_OR_Z85`.
//
//   absl::StatusOr<std::optional<CurveClientConfig>> curve =
//       LoadCurveClientConfig("keys/agent-7.key", "keys/orchestrator.pub");
//   if (!curve.ok()) return curve.status();
//   zmq::socket_t dealer(context, zmq::socket_type::dealer);
//   if (*curve) ConfigureCurveClient(dealer, **curve).IgnoreError();  // check it in real code
//   dealer.connect(endpoint);
//
// Thread-safety: every function may be called from any thread; ConfigureCurveClient as the
// socket passed in.
#ifndef COHORT_RUNTIME_SECURITY_CURVE_CLIENT_CONFIG_H_
#define COHORT_RUNTIME_SECURITY_CURVE_CLIENT_CONFIG_H_

#include <optional>
#include <string>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/security/curve_keys.h"

namespace cohort {

struct CurveClientConfig {
  CurveKeyPair keys;              // this side's key pair (from its secret key file)
  std::string key_name;           // the name in that file's metadata; "" when it has none
  std::string server_public_key;  // Z85
};

// The server's public key from `file_or_z85`: the key file at that path when there is one (a
// .pub file, or any key file), else the text itself when it is a Z85 CURVE key.
// INVALID_ARGUMENT when it is neither; errors of ReadPublicKeyFile otherwise.
absl::StatusOr<std::string> ReadServerPublicKey(const std::string& file_or_z85);

// nullopt when both `key_file` and `server_key` are empty (no CURVE); INVALID_ARGUMENT naming the
// missing one ("--key" or "--orchestrator-key") when only one is given; otherwise the key pair
// from ReadSecretKeyFile(key_file) and the server's key from ReadServerPublicKey(server_key), or
// their errors.
absl::StatusOr<std::optional<CurveClientConfig>> LoadCurveClientConfig(
    const std::string& key_file, const std::string& server_key);

// ConfigureCurveClient(socket, config.keys, config.server_public_key).
absl::Status ConfigureCurveClient(zmq::socket_t& socket, const CurveClientConfig& config);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_CURVE_CLIENT_CONFIG_H_
