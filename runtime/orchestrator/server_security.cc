#include "runtime/orchestrator/server_security.h"

#include <utility>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/base/clock.h"
#include "runtime/control/endpoint_text.h"

namespace cohort {
namespace {

// The `cohort orchestrator` flags that set each listener.
constexpr char kAgentListenFlag[] = "--listen";
constexpr char kClientListenFlag[] = "--client-listen";
constexpr char kRendezvousListenFlag[] = "--rendezvous-listen";

struct Listener {
  absl::string_view flag;
  absl::string_view role;  // as log lines name it: "agents'"
  absl::string_view endpoint;
  bool uses_curve = false;
};

// Why the listener cannot start: it needs CURVE and `missing` flags are not given.
absl::Status MissingKeys(const Listener& listener, CurvePolicy policy,
                         const std::vector<std::string>& missing) {
  const std::string why = policy == CurvePolicy::kAlways
                              ? absl::StrCat("--curve always makes ", listener.flag, " ",
                                             listener.endpoint, " need CURVE")
                              : absl::StrCat(listener.flag, " ", listener.endpoint,
                                             " is not a loopback address, so it needs CURVE");
  return absl::FailedPreconditionError(
      absl::StrCat(why, ": give ", absl::StrJoin(missing, " and "), " (cohort keygen makes keys)"));
}

// "agents' listener: CURVE; clients' listener: no CURVE (local only)".
std::string ListenerStates(const std::vector<Listener>& listeners) {
  return absl::StrJoin(listeners, "; ", [](std::string* out, const Listener& listener) {
    absl::StrAppend(out, listener.role,
                    " listener: ", listener.uses_curve ? "CURVE" : "no CURVE (local only)");
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerSecurity>> ServerSecurity::Start(
    zmq::context_t& context, ServerSecurityOptions options, absl::string_view agent_endpoint,
    absl::string_view client_endpoint, absl::string_view rendezvous_endpoint) {
  std::vector<Listener> listeners = {{kAgentListenFlag, "agents'", agent_endpoint},
                                     {kClientListenFlag, "clients'", client_endpoint}};
  if (!rendezvous_endpoint.empty()) {
    listeners.push_back({kRendezvousListenFlag, "rendezvous", rendezvous_endpoint});
  }
  const Listener* first_with_curve = nullptr;
  for (Listener& listener : listeners) {
    // A listener that is no endpoint at all is not one that needs CURVE.
    if (absl::Status text = CheckEndpointText(listener.flag, listener.endpoint); !text.ok()) {
      return text;
    }
    listener.uses_curve = CurveRequired(listener.endpoint, options.policy);
    if (listener.uses_curve && first_with_curve == nullptr) first_with_curve = &listener;
  }
  std::unique_ptr<ServerSecurity> security(
      new ServerSecurity(listeners[0].uses_curve, listeners[1].uses_curve,
                         listeners.size() > 2 && listeners[2].uses_curve));
  security->agent_key_families_ = std::move(options.agent_key_families);
  if (first_with_curve == nullptr) {
    security->Log(ListenerStates(listeners));
    return security;
  }
  std::vector<std::string> missing;
  if (!options.server_keys) missing.push_back("--key");
  if (!options.authorized_keys) missing.push_back("--authorized-keys");
  if (!missing.empty()) return MissingKeys(*first_with_curve, options.policy, missing);
  const size_t authorized = options.authorized_keys->size();
  ServerSecurity* raw = security.get();
  absl::StatusOr<std::unique_ptr<CurveAuthenticator>> authenticator = CurveAuthenticator::Start(
      context, *std::move(options.authorized_keys),
      [raw](absl::string_view line) { raw->Log(absl::StrCat("security: ", line)); });
  if (!authenticator.ok()) return authenticator.status();
  security->authenticator_ = *std::move(authenticator);
  security->server_keys_ = std::move(options.server_keys);
  security->Log(absl::StrCat(ListenerStates(listeners), "; ", authorized, " authorized keys"));
  return security;
}

ServerSecurity::ServerSecurity(bool agents_use_curve, bool clients_use_curve,
                               bool rendezvous_uses_curve)
    : agents_use_curve_(agents_use_curve),
      clients_use_curve_(clients_use_curve),
      rendezvous_uses_curve_(rendezvous_uses_curve),
      dropped_agent_messages_([this](absl::string_view line) { Log(line); }) {}

absl::Status ServerSecurity::ConfigureAgentSocket(zmq::socket_t& socket) {
  return ConfigureServer(agents_use_curve_, socket);
}

absl::Status ServerSecurity::ConfigureClientSocket(zmq::socket_t& socket) {
  return ConfigureServer(clients_use_curve_, socket);
}

absl::Status ServerSecurity::ConfigureRendezvousSocket(zmq::socket_t& socket) {
  return ConfigureServer(rendezvous_uses_curve_, socket);
}

absl::Status ServerSecurity::ConfigureServer(bool uses_curve, zmq::socket_t& socket) {
  if (!uses_curve) return absl::OkStatus();
  return authenticator_->ConfigureServer(socket, *server_keys_);
}

bool ServerSecurity::AcceptAgentMessage(absl::string_view identity, const zmq::message_t& payload) {
  if (!agents_use_curve_) return true;
  const std::string name = AuthenticatedPeerName(payload);
  if (name == identity) return true;
  for (const std::string& family : agent_key_families_) {
    if (name == family && absl::StartsWith(identity, absl::StrCat(family, "-"))) return true;
  }
  dropped_agent_messages_.Report(
      absl::StrCat("security: dropped a message: agent socket identity '",
                   absl::CHexEscape(identity), "' is not the authenticated key name '", name, "'"),
      SystemClock().MonotonicSeconds());
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
  const auto* change = std::get_if<ChangeExperiment>(&request);
  const auto* kill_trial = std::get_if<KillTrial>(&request);
  if (submit == nullptr && kill == nullptr && change == nullptr && kill_trial == nullptr) {
    return std::nullopt;
  }
  const std::string client = absl::StrCat("client '", client_name, "'");
  if (const auto* error = std::get_if<ClientError>(&reply)) {
    return absl::StrCat(client, " was refused ", ClientMessageName(request), ": ", error->message);
  }
  if (const auto* submitted = std::get_if<ExperimentSubmitted>(&reply)) {
    return absl::StrCat(client, " submitted experiment ", submitted->experiment_id);
  }
  if (kill != nullptr) return absl::StrCat(client, " killed experiment ", kill->experiment_id);
  if (change != nullptr) {
    return absl::StrCat(client, " asked to ", ExperimentChangeName(change->change), " experiment ",
                        change->experiment_id);
  }
  if (kill_trial != nullptr) return absl::StrCat(client, " killed trial ", kill_trial->trial_id);
  return absl::StrCat(client, " sent ", ClientMessageName(request), ", answered ",
                      ClientMessageName(reply));
}

}  // namespace cohort
