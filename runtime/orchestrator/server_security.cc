#include "runtime/orchestrator/server_security.h"

#include <chrono>
#include <utility>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

// The `cohort orchestrator` flags that set each listener.
constexpr char kAgentListenFlag[] = "--listen";
constexpr char kClientListenFlag[] = "--client-listen";

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Why the listener `flag` at `endpoint` cannot start: it needs CURVE and `missing` flags are
// not given.
absl::Status MissingKeys(absl::string_view flag, absl::string_view endpoint, CurvePolicy policy,
                         const std::vector<std::string>& missing) {
  const std::string why =
      policy == CurvePolicy::kAlways
          ? absl::StrCat("--curve always makes ", flag, " ", endpoint, " need CURVE")
          : absl::StrCat(flag, " ", endpoint, " is not a loopback address, so it needs CURVE");
  return absl::FailedPreconditionError(absl::StrCat(
      why, ": give ", absl::StrJoin(missing, " and "), " (cohort keygen makes keys)"));
}

std::string ListenerState(absl::string_view role, bool uses_curve) {
  return absl::StrCat(role, " listener: ", uses_curve ? "CURVE" : "no CURVE (local only)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerSecurity>> ServerSecurity::Start(
    zmq::context_t& context, ServerSecurityOptions options, absl::string_view agent_endpoint,
    absl::string_view client_endpoint) {
  // A listener that is no endpoint at all is not one that needs CURVE.
  for (const auto& [flag, endpoint] : {std::pair(kAgentListenFlag, agent_endpoint),
                                       std::pair(kClientListenFlag, client_endpoint)}) {
    if (!absl::StrContains(endpoint, "://")) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " '", endpoint, "' is not a ZeroMQ endpoint (transport://address, such as ",
          "tcp://0.0.0.0:29400)"));
    }
  }
  const bool agents_use_curve = CurveRequired(agent_endpoint, options.policy);
  const bool clients_use_curve = CurveRequired(client_endpoint, options.policy);
  std::unique_ptr<ServerSecurity> security(new ServerSecurity(agents_use_curve, clients_use_curve));
  if (!agents_use_curve && !clients_use_curve) {
    security->Log(absl::StrCat(ListenerState("agents'", false), "; ",
                               ListenerState("clients'", false)));
    return security;
  }
  std::vector<std::string> missing;
  if (!options.server_keys) missing.push_back("--key");
  if (!options.authorized_keys) missing.push_back("--authorized-keys");
  if (!missing.empty()) {
    return agents_use_curve
               ? MissingKeys(kAgentListenFlag, agent_endpoint, options.policy, missing)
               : MissingKeys(kClientListenFlag, client_endpoint, options.policy, missing);
  }
  const size_t authorized = options.authorized_keys->size();
  ServerSecurity* raw = security.get();
  absl::StatusOr<std::unique_ptr<CurveAuthenticator>> authenticator = CurveAuthenticator::Start(
      context, *std::move(options.authorized_keys),
      [raw](absl::string_view line) { raw->Log(absl::StrCat("security: ", line)); });
  if (!authenticator.ok()) return authenticator.status();
  security->authenticator_ = *std::move(authenticator);
  security->server_keys_ = std::move(options.server_keys);
  security->Log(absl::StrCat(ListenerState("agents'", agents_use_curve), "; ",
                             ListenerState("clients'", clients_use_curve), "; ", authorized,
                             " authorized keys"));
  return security;
}

ServerSecurity::ServerSecurity(bool agents_use_curve, bool clients_use_curve)
    : agents_use_curve_(agents_use_curve),
      clients_use_curve_(clients_use_curve),
      dropped_agent_messages_([this](absl::string_view line) { Log(line); }) {}

absl::Status ServerSecurity::ConfigureAgentSocket(zmq::socket_t& socket) {
  if (!agents_use_curve_) return absl::OkStatus();
  return authenticator_->ConfigureServer(socket, *server_keys_);
}

absl::Status ServerSecurity::ConfigureClientSocket(zmq::socket_t& socket) {
  if (!clients_use_curve_) return absl::OkStatus();
  return authenticator_->ConfigureServer(socket, *server_keys_);
}

bool ServerSecurity::AcceptAgentMessage(absl::string_view identity,
                                        const zmq::message_t& payload) {
  if (!agents_use_curve_) return true;
  const std::string name = AuthenticatedPeerName(payload);
  if (name == identity) return true;
  dropped_agent_messages_.Report(
      absl::StrCat("security: dropped a message: agent socket identity '",
                   absl::CHexEscape(identity), "' is not the authenticated key name '", name,
                   "'"),
      MonotonicSeconds());
  return false;
}

std::string ServerSecurity::ClientName(const zmq::message_t& payload) const {
  return clients_use_curve_ ? AuthenticatedPeerName(payload) : std::string();
}

std::vector<std::string> ServerSecurity::TakeLog() {
  const std::lock_guard<std::mutex> lock(log_mutex_);
  return std::exchange(log_, {});
}

void ServerSecurity::Log(absl::string_view line) {
  const std::lock_guard<std::mutex> lock(log_mutex_);
  log_.emplace_back(line);
}

std::optional<std::string> ClientActionLine(absl::string_view client_name,
                                            const ClientMessage& request,
                                            const ClientMessage& reply) {
  const auto* submit = std::get_if<SubmitExperiment>(&request);
  const auto* kill = std::get_if<KillExperiment>(&request);
  if (submit == nullptr && kill == nullptr) return std::nullopt;
  const std::string client = absl::StrCat("client '", client_name, "'");
  if (const auto* error = std::get_if<ClientError>(&reply)) {
    return absl::StrCat(client, " was refused ", ClientMessageName(request), ": ",
                        error->message);
  }
  if (const auto* submitted = std::get_if<ExperimentSubmitted>(&reply)) {
    return absl::StrCat(client, " submitted experiment ", submitted->experiment_id);
  }
  if (kill != nullptr) return absl::StrCat(client, " killed experiment ", kill->experiment_id);
  return absl::StrCat(client, " sent ", ClientMessageName(request), ", answered ",
                      ClientMessageName(reply));
}

}  // namespace cohort
