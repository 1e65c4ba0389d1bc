#include "runtime/security/rendezvous_key_variables.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/security/curve_keys.h"

namespace cohort {

std::vector<std::pair<std::string, std::string>> RendezvousKeyVariables(
    const CurveClientConfig& config) {
  return {{kRendezvousServerKeyVariable, config.server_public_key},
          {kRendezvousPublicKeyVariable, config.keys.public_key},
          {kRendezvousSecretKeyVariable, config.keys.secret_key}};
}

absl::StatusOr<std::optional<CurveClientConfig>> ReadRendezvousKeyVariables(
    const VariableLookup& lookup) {
  const char* const names[] = {kRendezvousServerKeyVariable, kRendezvousPublicKeyVariable,
                               kRendezvousSecretKeyVariable};
  const char* values[3] = {};
  const char* set = nullptr;  // the name of one variable that is set
  for (int i = 0; i < 3; ++i) {
    values[i] = lookup(names[i]);
    if (values[i] != nullptr) set = names[i];
  }
  if (set == nullptr) return std::nullopt;
  for (int i = 0; i < 3; ++i) {
    if (values[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[i], " is not set, though ", set,
                       " is: the rendezvous needs all three CURVE keys or none"));
    }
    if (!IsCurveKey(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[i], " is not a CURVE key (40 characters of Z85)"));
    }
  }
  CurveClientConfig config;
  config.server_public_key = values[0];
  config.keys.public_key = values[1];
  config.keys.secret_key = values[2];
  absl::StatusOr<std::string> derived = CurvePublicKeyOf(config.keys.secret_key);
  if (!derived.ok() || *derived != config.keys.public_key) {
    return absl::InvalidArgumentError(absl::StrCat(kRendezvousPublicKeyVariable,
                                                   " does not belong to the secret key in ",
                                                   kRendezvousSecretKeyVariable));
  }
  return config;
}

}  // namespace cohort
