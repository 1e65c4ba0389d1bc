// OrchestratorServer: the orchestrator daemon's sockets and loop around an Orchestrator.
//
// It binds two ZeroMQ ROUTER sockets: one for agents, whose DEALERs are named by their agent ids
// and speak the control protocol (runtime/control/control_messages.h), and one for clients, who
// speak the client protocol (runtime/client/client_messages.h). Run feeds every valid agent
// message to Orchestrator::OnAgentMessage, answers every client request with
// Orchestrator::OnClientRequest (the reply's correlation_id is the request's message_id), calls
// Orchestrator::Tick every tick interval and logs the orchestrator's events.
//
// A message that does not decode never stops the loop: from an agent it is dropped and logged;
// from a client it is logged and, when the envelope's header can still be read, answered with
// ClientError (kInvalidRequest, or kUnsupportedVersion for another protocol major, whose reply
// has correlation_id 0 since that major's header layout is unknown). A reply type sent as a
// request is answered with ClientError kInvalidRequest. The orchestrator's messages to an agent
// that is not connected are not sent (its AgentOutbox returns 0).
//
// CURVE (ServerSecurity, options.security): each listener that needs it, the rendezvous host's
// included, is a CURVE server, and only peers with authorized keys get through; an agent's
// message whose key name is not its agent id is dropped and logged, and with CURVE on the
// clients' listener each submission and kill is logged under the client's key name.
//
//   std::atomic<bool> stop{false};
//   auto server = OrchestratorServer::Bind(OrchestratorServerOptions{}, options, SystemClock());
//   if (!server.ok()) { /* the status names the endpoint that could not be bound */ }
//   std::printf("agents connect to %s\n", (*server)->agent_endpoint().c_str());
//   absl::Status status = (*server)->Run(stop);  // until `stop` becomes true
//
// Thread-safety: one thread at a time (Bind may run on one thread and Run on another). `stop` may
// be set from any thread or a signal handler; Run notices it within one tick interval.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_SERVER_H_
#define COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/base/clock.h"
#include "runtime/client/client_messages.h"
#include "runtime/observe/metrics_endpoint.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/rendezvous_host.h"
#include "runtime/orchestrator/server_security.h"
#include "runtime/security/refusal_log.h"

namespace cohort {

struct OrchestratorServerOptions {
  // ZeroMQ endpoints the two ROUTERs bind; a port of "*" picks a free one (see agent_endpoint()).
  std::string agent_endpoint = "tcp://127.0.0.1:29400";
  std::string client_endpoint = "tcp://127.0.0.1:29401";
  std::chrono::milliseconds tick_interval{200};
  // Which listeners use CURVE, and its keys (see ServerSecurity).
  ServerSecurityOptions security;
  // Receives each line to log (without a newline) with its level, on the thread running Run: the
  // Orchestrator's events, and the server's own lines (dropped or malformed messages, which are
  // notices; CURVE's set-up, refusals and clients' actions, which are details). Default: every
  // line on stderr prefixed "orchestrator: ".
  std::function<void(const OrchestratorEvent& event)> log;
  // When set, sees each valid agent message just before the Orchestrator does (on the thread
  // running Run); a program embedding the orchestrator shows progress from it.
  std::function<void(const std::string& agent_id, const DecodedControl& message)> on_agent_message;
  // When set, called after each turn of the loop, at least once per tick interval, on the thread
  // running Run: a program embedding the orchestrator (`cohort run`) submits, kills and watches
  // experiments here, and may set Run's `stop`.
  std::function<void(Orchestrator& orchestrator)> on_turn;
  // When set, the orchestrator's metrics page (Orchestrator::MetricsPage) is published there
  // about once a second. Must outlive Run.
  MetricsEndpoint* metrics = nullptr;
  // When set, called about once a second on the thread running Run with `ask`, which answers a
  // read-only client request as the client channel does (Orchestrator::Query: it changes
  // nothing): the web dashboard takes its snapshot of the cluster here, through the same requests
  // and replies as the CLI.
  using AskOrchestrator = std::function<ClientMessage(const ClientMessage& request)>;
  std::function<void(const AskOrchestrator& ask)> each_second;
};

class OrchestratorServer {
 public:
  // Binds both sockets and creates the Orchestrator. UNAVAILABLE (or INVALID_ARGUMENT for a
  // malformed endpoint) naming the endpoint when a bind fails; FAILED_PRECONDITION naming the
  // flags to give when a listener needs CURVE without keys (ServerSecurity::Start). `clock` must
  // outlive the server.
  // A non-empty orchestrator_options.rendezvous_endpoint is bound too, as the RendezvousHost of
  // the tasks spanning agents (served in Run; an ended task's keys are forgotten), with CURVE
  // where its endpoint needs it, and the Orchestrator hands agents its resolved endpoint.
  static absl::StatusOr<std::unique_ptr<OrchestratorServer>> Bind(
      OrchestratorServerOptions options, OrchestratorOptions orchestrator_options, Clock& clock);

  ~OrchestratorServer();
  OrchestratorServer(const OrchestratorServer&) = delete;
  OrchestratorServer& operator=(const OrchestratorServer&) = delete;

  // Serves agents and clients until `stop` is true, then returns OK. An error only when the
  // sockets themselves fail.
  absl::Status Run(const std::atomic<bool>& stop);

  // The endpoints actually bound, ports resolved: "tcp://127.0.0.1:41234".
  const std::string& agent_endpoint() const { return agent_endpoint_; }
  const std::string& client_endpoint() const { return client_endpoint_; }
  // "" without a rendezvous host.
  std::string rendezvous_endpoint() const { return rendezvous_ ? rendezvous_->endpoint() : ""; }

 private:
  class RouterOutbox;

  OrchestratorServer(OrchestratorServerOptions options, zmq::context_t context,
                     std::unique_ptr<ServerSecurity> security, zmq::socket_t agent_socket,
                     zmq::socket_t client_socket);

  // Each handles at most a bounded batch of waiting messages, so neither socket nor the tick
  // starves the others. An error only when the socket fails.
  absl::Status ServeAgents();
  absl::Status ServeClients();
  void ServeClient(const zmq::message_t& identity, const zmq::message_t& payload);
  void Reply(const zmq::message_t& identity, uint64_t correlation_id, const ClientMessage& reply);
  void LogEvents();
  void Log(absl::string_view line,
           OrchestratorEvent::Level level = OrchestratorEvent::Level::kNotice);

  OrchestratorServerOptions options_;
  zmq::context_t context_;                    // declared before the sockets: destroyed after them
  std::unique_ptr<ServerSecurity> security_;  // likewise, and after the context
  Clock* clock_ = nullptr;                    // Bind's: the orchestrator's and the log's time
  // Malformed messages, logged at most once a minute per peer (and once for all clients).
  RefusalLog malformed_{[this](absl::string_view line) { Log(line); }};
  zmq::socket_t agent_socket_;
  zmq::socket_t client_socket_;
  std::string agent_endpoint_;
  std::string client_endpoint_;
  std::unique_ptr<RouterOutbox> outbox_;
  std::unique_ptr<RendezvousHost> rendezvous_;  // null without a rendezvous endpoint
  std::unique_ptr<Orchestrator> orchestrator_;  // declared after outbox_: destroyed before it
  uint64_t last_reply_id_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_ORCHESTRATOR_SERVER_H_
