#include "runtime/security/curve_client_config.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/security/curve_client.h"

namespace cohort {

absl::StatusOr<std::string> ReadServerPublicKey(const std::string& file_or_z85) {
  // A path wins: a path may itself be 40 characters of the Z85 alphabet ('/' and '.' are in it).
  struct stat info {};
  if (::stat(file_or_z85.c_str(), &info) == 0) return ReadPeerPublicKeyFile(file_or_z85);
  if (IsCurveKey(file_or_z85)) return file_or_z85;
  return absl::InvalidArgumentError(absl::StrCat(
      "'", file_or_z85, "' is neither a key file nor a CURVE public key (40 characters of Z85)"));
}

absl::StatusOr<std::optional<CurveClientConfig>> LoadCurveClientConfig(
    const std::string& key_file, const std::string& server_key) {
  if (key_file.empty() && server_key.empty()) return std::nullopt;
  if (key_file.empty()) {
    return absl::InvalidArgumentError(
        "--orchestrator-key needs --key too (this side's secret key file)");
  }
  if (server_key.empty()) {
    return absl::InvalidArgumentError(
        "--key needs --orchestrator-key too (the orchestrator's public key: a .pub file or its "
        "Z85 text)");
  }
  CurveClientConfig config;
  absl::StatusOr<CurveKeyPair> keys = ReadSecretKeyFile(key_file);
  if (!keys.ok()) return keys.status();
  config.keys = *std::move(keys);
  absl::StatusOr<std::string> name = ReadKeyFileName(key_file);
  if (!name.ok()) return name.status();
  config.key_name = *std::move(name);
  absl::StatusOr<std::string> server_public_key = ReadServerPublicKey(server_key);
  if (!server_public_key.ok()) return server_public_key.status();
  config.server_public_key = *std::move(server_public_key);
  return config;
}

absl::Status ConfigureCurveClient(zmq::socket_t& socket, const CurveClientConfig& config) {
  return ConfigureCurveClient(socket, config.keys, config.server_public_key);
}

}  // namespace cohort
