#include "harness/cohort/run/launch_keys.h"

#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/launch/rank_network.h"
#include "runtime/security/authorized_keys.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

constexpr char kOrchestratorKeyName[] = "orchestrator";

std::string KeyPath(const std::string& dir, const std::string& name, const char* suffix) {
  return absl::StrCat(dir, "/", name, suffix);
}

}  // namespace

absl::Status WriteLaunchKeys(const std::string& dir, uint32_t world_size) {
  std::vector<std::string> names = {kOrchestratorKeyName};
  for (uint32_t rank = 0; rank < world_size; ++rank) {
    names.push_back(LaunchedAgentId(rank, world_size));
  }
  std::error_code error;
  if (std::filesystem::create_directories(dir, error)) {
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, error);
  }
  if (error)
    return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  for (const std::string& name : names) {
    for (const char* suffix : {".key", ".pub"}) {
      if (std::filesystem::exists(KeyPath(dir, name, suffix), error)) {
        return absl::AlreadyExistsError(absl::StrCat(
            KeyPath(dir, name, suffix), " already exists (keys are never overwritten)"));
      }
    }
  }
  for (const std::string& name : names) {
    absl::StatusOr<CurveKeyPair> keys = GenerateCurveKeyPair();
    if (!keys.ok()) return keys.status();
    if (absl::Status s = WriteSecretKeyFile(KeyPath(dir, name, ".key"), name, *keys); !s.ok()) {
      return s;
    }
    if (absl::Status s = WritePublicKeyFile(KeyPath(dir, name, ".pub"), name, keys->public_key);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerSecurityOptions> LaunchServerSecurity(const std::string& dir) {
  ServerSecurityOptions security;
  absl::StatusOr<CurveKeyPair> keys = ReadSecretKeyFile(KeyPath(dir, kOrchestratorKeyName, ".key"));
  if (!keys.ok()) return keys.status();
  security.server_keys = *std::move(keys);
  // The folder of NAME.pub files: every rank's key under its name.
  absl::StatusOr<AuthorizedKeys> admitted = AuthorizedKeys::Load(dir);
  if (!admitted.ok()) return admitted.status();
  security.authorized_keys = *std::move(admitted);
  return security;
}

absl::StatusOr<CurveClientConfig> LaunchAgentKeys(const std::string& dir,
                                                  const std::string& agent_id) {
  const std::string key = KeyPath(dir, agent_id, ".key");
  std::error_code error;
  if (!std::filesystem::exists(key, error)) {
    return absl::NotFoundError(absl::StrCat(
        key,
        " does not exist: the keys folder holds no key for this rank (make one for every "
        "rank of the job with `cohort keygen --out DIR --launch WORLD_SIZE`)"));
  }
  absl::StatusOr<std::optional<CurveClientConfig>> config =
      LoadCurveClientConfig(key, KeyPath(dir, kOrchestratorKeyName, ".pub"));
  if (!config.ok()) return config.status();
  return **config;
}

}  // namespace cohort
