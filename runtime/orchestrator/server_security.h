// ServerSecurity: CURVE on the orchestrator daemon's listeners: the agents', the clients' and,
// when there is one, the rendezvous host's, where the workers of trials spanning agents meet
// (docs/protocol.md, "Security").
//
// Each listener decides for itself (CurveRequired with the policy): by default a listener on
// loopback runs without CURVE and every other one with it. When one needs CURVE, Start demands
// the server's key pair and the authorized keys, and starts the CurveAuthenticator on the
// server's context, which must happen before the sockets are bound; every socket configured here
// must belong to that context. With CURVE on the agents' listener, a message is accepted only
// when the name of its sender's key (its User-Id) is its socket identity, the agent id: an agent
// cannot speak for another. With CURVE on the clients' listener, the client's key name is known
// for every request (ClientName) and what it changes is logged (ClientActionLine). With CURVE on
// the rendezvous listener, any authorized key gets in (workers present their agent's key).
//
// Refusals (the authenticator's) and dropped agent messages are logged at most once a minute per
// distinct line; the lines wait in a queue until TakeLog, so the daemon writes them from its own
// thread.
//
//   zmq::context_t context;
//   auto security = ServerSecurity::Start(context, options, agent_endpoint, client_endpoint,
//                                         rendezvous_endpoint);
//   if (!security.ok()) return security.status();  // "--listen tcp://0.0.0.0:29400 is not ..."
//   zmq::socket_t agents(context, zmq::socket_type::router);
//   (*security)->ConfigureAgentSocket(agents);  // then bind
//   ...
//   if (!(*security)->AcceptAgentMessage(identity, payload)) continue;  // dropped and logged
//   ...
//   agents.close();  // every socket closes before the ServerSecurity goes, which goes before
//                    // the context
//
// Thread-safety: TakeLog may be called from any thread; the rest on the thread that owns the
// sockets.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_SERVER_SECURITY_H_
#define COHORT_RUNTIME_ORCHESTRATOR_SERVER_SECURITY_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/client/client_messages.h"
#include "runtime/security/authorized_keys.h"
#include "runtime/security/curve_keys.h"
#include "runtime/security/curve_server.h"
#include "runtime/security/listen_policy.h"
#include "runtime/security/refusal_log.h"

namespace cohort {

// What `cohort orchestrator --curve --key --authorized-keys` give.
struct ServerSecurityOptions {
  CurvePolicy policy = CurvePolicy::kUnlessLocal;  // --curve auto (kUnlessLocal) or always
  std::optional<CurveKeyPair> server_keys;         // --key: the orchestrator's key pair
  std::optional<AuthorizedKeys> authorized_keys;   // --authorized-keys: who may connect
  // Key names that speak for a family of agents: a key named F is accepted from every agent
  // whose id is F-<anything> (the agents of Slurm jobs share the key named "slurm", their ids
  // made per job). Empty: each agent's key is named as its id.
  std::vector<std::string> agent_key_families;
};

class ServerSecurity {
 public:
  // Decides CURVE for each endpoint (as given, before binding; an empty `rendezvous_endpoint`
  // means no rendezvous listener) and starts the authenticator on `context` when one needs it.
  // INVALID_ARGUMENT for an endpoint without "://"; FAILED_PRECONDITION naming the listener's
  // flag (--listen, --client-listen, --rendezvous-listen), its endpoint and the missing flags when
  // one needs CURVE without keys; the authenticator's errors.
  static absl::StatusOr<std::unique_ptr<ServerSecurity>> Start(
      zmq::context_t& context, ServerSecurityOptions options, absl::string_view agent_endpoint,
      absl::string_view client_endpoint, absl::string_view rendezvous_endpoint = {});

  ServerSecurity(const ServerSecurity&) = delete;
  ServerSecurity& operator=(const ServerSecurity&) = delete;

  // Makes a ROUTER (not yet bound) a CURVE server when its listener needs CURVE; otherwise
  // leaves it alone. Errors as CurveAuthenticator::ConfigureServer.
  absl::Status ConfigureAgentSocket(zmq::socket_t& socket);
  absl::Status ConfigureClientSocket(zmq::socket_t& socket);
  absl::Status ConfigureRendezvousSocket(zmq::socket_t& socket);

  bool agents_use_curve() const { return agents_use_curve_; }
  bool clients_use_curve() const { return clients_use_curve_; }
  bool rendezvous_uses_curve() const { return rendezvous_uses_curve_; }

  // Whether a message received on the agents' socket from `identity`, with `payload` its first
  // part after the identity, may reach the Orchestrator: always without CURVE; with CURVE only
  // when the sender's key name is `identity`, or a family of agent_key_families whose member
  // `identity` is. A refused message is logged.
  bool AcceptAgentMessage(absl::string_view identity, const zmq::message_t& payload);

  // The key name of the client that sent `payload` (a received part), or "" without CURVE.
  std::string ClientName(const zmq::message_t& payload) const;

  // The lines logged since the last call, oldest first: which listeners use CURVE (once, from
  // Start), refusals, dropped agent messages.
  std::vector<std::string> TakeLog();

 private:
  ServerSecurity(bool agents_use_curve, bool clients_use_curve, bool rendezvous_uses_curve);
  absl::Status ConfigureServer(bool uses_curve, zmq::socket_t& socket);
  void Log(absl::string_view line);

  const bool agents_use_curve_;
  const bool clients_use_curve_;
  const bool rendezvous_uses_curve_;
  std::optional<CurveKeyPair> server_keys_;
  std::vector<std::string> agent_key_families_;  // ServerSecurityOptions'
  std::mutex log_mutex_;
  std::vector<std::string> log_;  // guarded by log_mutex_
  RefusalLog dropped_agent_messages_;
  // Declared last: destroyed first, so its thread never logs into a destroyed queue.
  std::unique_ptr<CurveAuthenticator> authenticator_;
};

// For a request that changes what the orchestrator runs (SubmitExperiment, KillExperiment) from
// the client named `client_name`, the line recording it and its outcome: "client 'alice'
// submitted experiment 4", "client 'alice' killed experiment 4", "client 'alice' was refused
// KillExperiment: <why>". nullopt for every other request.
std::optional<std::string> ClientActionLine(absl::string_view client_name,
                                            const ClientMessage& request,
                                            const ClientMessage& reply);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_SERVER_SECURITY_H_
