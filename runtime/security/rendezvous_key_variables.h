// Rendezvous key variables: how an agent that reaches the orchestrator over CURVE hands each worker
// of a task spanning agents what it needs to be a CURVE client of the orchestrator's rendezvous
// host, and how the worker reads it back. Three environment variables, each a Z85 key:
//
//   COHORT_RENDEZVOUS_SERVER_KEY   the orchestrator's public key (the server the worker accepts)
//   COHORT_RENDEZVOUS_PUBLIC_KEY   the agent's public key, authorized at the orchestrator
//   COHORT_RENDEZVOUS_SECRET_KEY   the agent's secret key
//
// The workers present their agent's key: the rendezvous host admits every authorized key.
//
//   // agent, building a worker's environment:
//   for (const auto& [name, value] : RendezvousKeyVariables(*agent_curve)) env[name] = value;
//   // worker:
//   absl::StatusOr<std::optional<CurveClientConfig>> keys = ReadRendezvousKeyVariables(getenv);
//   if (!keys.ok()) return keys.status();  // "COHORT_RENDEZVOUS_SECRET_KEY is not set, ..."
//   if (*keys) options.setup_socket = ...;  // ConfigureCurveClient(socket, **keys)
//
// Thread-safety: pure functions; ReadRendezvousKeyVariables calls `lookup` on the caller's
// thread.
#ifndef COHORT_RUNTIME_SECURITY_RENDEZVOUS_KEY_VARIABLES_H_
#define COHORT_RUNTIME_SECURITY_RENDEZVOUS_KEY_VARIABLES_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

inline constexpr char kRendezvousServerKeyVariable[] = "COHORT_RENDEZVOUS_SERVER_KEY";
inline constexpr char kRendezvousPublicKeyVariable[] = "COHORT_RENDEZVOUS_PUBLIC_KEY";
inline constexpr char kRendezvousSecretKeyVariable[] = "COHORT_RENDEZVOUS_SECRET_KEY";

// The three variables, as (name, value), for the client `config` (its keys and its server's
// public key): server key, public key, secret key.
std::vector<std::pair<std::string, std::string>> RendezvousKeyVariables(
    const CurveClientConfig& config);

// A variable's value, or nullptr when it is not set (std::getenv fits).
using VariableLookup = std::function<const char*(const char* name)>;

// nullopt when none of the three is set; the client config (without a key name) when all three
// hold a CURVE key and the public key belongs to the secret key. Otherwise INVALID_ARGUMENT
// naming the variable: one is not set while another is, one is not a CURVE key (40 characters of
// Z85), or the public key does not belong to the secret key.
absl::StatusOr<std::optional<CurveClientConfig>> ReadRendezvousKeyVariables(
    const VariableLookup& lookup);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_RENDEZVOUS_KEY_VARIABLES_H_
