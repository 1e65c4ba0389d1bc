#include "runtime/orchestrator/orchestrator_server.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client_generated.h"
#include "runtime/base/daemon_log.h"
#include "runtime/control/socket_io.h"

namespace cohort {
namespace {

namespace wire = ::cohort::fbs::client;

using SteadyClock = std::chrono::steady_clock;

// Messages taken from one socket before the loop turns to the other socket and the tick.
constexpr int kMessagesPerTurn = 256;
// The loop overrunning a wait, or a turn's work lasting, longer than this is the orchestrator's
// own pause (Orchestrator::ExcuseOwnPause).
constexpr std::chrono::seconds kOwnPause{3};
constexpr int kLingerMilliseconds = 1000;
// The agents' ROUTER pings each connection this often and drops one silent this long. A lost
// host's connection (no FIN, no RST) would otherwise keep its agent id for as long as TCP takes
// to give up, and the ROUTER hears no other connection under that id meanwhile: not the agent
// back on a rebooted host, nor a `cohort launch` rank started again elsewhere. ZeroMQ answers
// pings on its own threads, so a busy agent is not dropped.
constexpr int kAgentPingMilliseconds = 2000;
constexpr int kAgentPingTimeoutMilliseconds = 10000;
// The client ROUTER takes messages up to this size, so one over kMaxFrameBytes (a request never
// needs that much) is answered and logged rather than dropped by ZeroMQ without a word. Beyond
// it ZeroMQ still closes the connection, bounding what a client can make the orchestrator hold.
constexpr int64_t kMostClientMessageBytes = 4 * kMaxFrameBytes;

void PrintEvent(const OrchestratorEvent& event) {
  const absl::string_view line = event.line;
  LogDaemonLine("orchestrator", line);
}

absl::string_view Bytes(const zmq::message_t& frame) {
  return absl::string_view(frame.data<char>(), frame.size());
}

// A socket identity as log text: agent ids are printable, generated identities are not.
std::string Printable(const zmq::message_t& identity) { return absl::CHexEscape(Bytes(identity)); }

// What a reply to an undecodable client request can still name: the envelope's protocol major
// and message id, read where the root table and those two fields verify.
struct RequestIdentity {
  uint16_t protocol_major = 0;
  uint64_t message_id = 0;
};

std::optional<RequestIdentity> ReadRequestIdentity(absl::string_view bytes) {
  constexpr size_t kPrefixBytes =
      sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
  if (bytes.size() < kPrefixBytes || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return std::nullopt;
  }
  // The Verifier wants the buffer aligned as its largest scalar.
  std::vector<uint64_t> aligned((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  const auto* data = reinterpret_cast<const uint8_t*>(aligned.data());
  if (!flatbuffers::BufferHasIdentifier(data, wire::ClientEnvelopeIdentifier())) {
    return std::nullopt;
  }
  flatbuffers::Verifier verifier(data, bytes.size());
  const flatbuffers::uoffset_t root = verifier.VerifyOffset(0);
  if (root == 0) return std::nullopt;
  const auto* envelope = reinterpret_cast<const flatbuffers::Table*>(data + root);
  if (!envelope->VerifyTableStart(verifier) ||
      !envelope->VerifyField<uint16_t>(verifier, wire::ClientEnvelope::VT_PROTOCOL_MAJOR,
                                       sizeof(uint16_t)) ||
      !envelope->VerifyField<uint64_t>(verifier, wire::ClientEnvelope::VT_MESSAGE_ID,
                                       sizeof(uint64_t))) {
    return std::nullopt;
  }
  return RequestIdentity{envelope->GetField<uint16_t>(wire::ClientEnvelope::VT_PROTOCOL_MAJOR, 0),
                         envelope->GetField<uint64_t>(wire::ClientEnvelope::VT_MESSAGE_ID, 0)};
}

// Sends [identity, bytes] without blocking. False when the peer is not connected (ZeroMQ's
// EHOSTUNREACH under ZMQ_ROUTER_MANDATORY) or its queue is full; `why` then says which.
bool SendTo(zmq::socket_t& socket, absl::string_view identity, absl::string_view bytes,
            std::string& why) {
  try {
    if (!socket.send(zmq::buffer(identity.data(), identity.size()),
                     zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
      why = "its queue is full";
      return false;
    }
    // Once the identity frame is accepted, ZeroMQ accepts the rest of the message.
    (void)socket.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
    return true;
  } catch (const zmq::error_t& error) {
    why = error.num() == EHOSTUNREACH ? "it is not connected" : error.what();
    return false;
  }
}

// A ROUTER bound to `endpoint`; `secure` configures it before the bind (ServerSecurity makes it a
// CURVE server where its listener needs one).
absl::StatusOr<zmq::socket_t> BindRouter(
    zmq::context_t& context, const std::string& endpoint, absl::string_view role,
    int64_t max_message_bytes, const std::function<absl::Status(zmq::socket_t&)>& secure) {
  try {
    zmq::socket_t socket(context, zmq::socket_type::router);
    socket.set(zmq::sockopt::router_mandatory, 1);
    socket.set(zmq::sockopt::linger, kLingerMilliseconds);
    socket.set(zmq::sockopt::maxmsgsize, max_message_bytes);
    if (absl::Status status = secure(socket); !status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("securing the ", role, " socket: ", status.message()));
    }
    socket.bind(endpoint);
    return socket;
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("binding the ", role, " socket to '", endpoint, "'"), error);
  }
}

}  // namespace

// The orchestrator's AgentOutbox: frames [agent id, control envelope] on the agent ROUTER.
class OrchestratorServer::RouterOutbox final : public AgentOutbox {
 public:
  explicit RouterOutbox(OrchestratorServer& server) : server_(server) {}

  uint64_t Send(const std::string& agent_id, const ControlMessage& message,
                uint64_t correlation_id) override {
    const uint64_t id = last_message_id_ + 1;
    const std::string bytes = EncodeControlMessage(
        ControlHeader{id, correlation_id, std::string(kOrchestratorSender)}, message);
    std::string why;
    if (!SendTo(server_.agent_socket_, agent_id, bytes, why)) {
      // An answer that cannot leave is not worth a line each (an agent away sends a backlog):
      // the agent sends again what it sees unanswered once it registers again.
      if (std::holds_alternative<Ack>(message) || std::holds_alternative<ErrorReply>(message)) {
        return 0;
      }
      // An agent whose connection closed is lost only once its heartbeats stay away for the
      // agent timeout: said, so the quiet that follows reads as waiting, not as a hang. A kill
      // (often of a task whose agent was just taken for lost) needs no resend: an agent that
      // registers again holding the task is told to stop it then.
      const bool gone = why == "it is not connected";
      const char* what_next =
          std::holds_alternative<KillTask>(message)
              ? " (its connection closed; if it registers again holding the task, it is stopped "
                "then)"
              : " (its connection closed; it is taken for lost once its heartbeats stay away for "
                "the agent timeout, unless it connects again)";
      server_.Log(absl::StrCat("could not send ", ControlMessageName(message), " to agent ",
                               absl::CHexEscape(agent_id), ": ", why, gone ? what_next : ""));
      return 0;
    }
    last_message_id_ = id;
    return id;
  }

 private:
  OrchestratorServer& server_;
  uint64_t last_message_id_ = 0;
};

absl::StatusOr<std::unique_ptr<OrchestratorServer>> OrchestratorServer::Bind(
    OrchestratorServerOptions options, OrchestratorOptions orchestrator_options, Clock& clock) {
  if (options.tick_interval <= std::chrono::milliseconds::zero()) {
    return absl::InvalidArgumentError("the tick interval must be positive");
  }
  if (!options.log) options.log = PrintEvent;
  zmq::context_t context;
  // Before any bind: without its authenticator, ZeroMQ lets every CURVE client in.
  absl::StatusOr<std::unique_ptr<ServerSecurity>> security =
      ServerSecurity::Start(context, std::move(options.security), options.agent_endpoint,
                            options.client_endpoint, orchestrator_options.rendezvous_endpoint);
  if (!security.ok()) return security.status();
  ServerSecurity& secure = **security;
  absl::StatusOr<zmq::socket_t> agent_socket = BindRouter(
      context, options.agent_endpoint, "agent", kMaxFrameBytes, [&secure](zmq::socket_t& socket) {
        socket.set(zmq::sockopt::heartbeat_ivl, kAgentPingMilliseconds);
        socket.set(zmq::sockopt::heartbeat_timeout, kAgentPingTimeoutMilliseconds);
        return secure.ConfigureAgentSocket(socket);
      });
  if (!agent_socket.ok()) return agent_socket.status();
  absl::StatusOr<zmq::socket_t> client_socket =
      BindRouter(context, options.client_endpoint, "client", kMostClientMessageBytes,
                 [&secure](zmq::socket_t& socket) { return secure.ConfigureClientSocket(socket); });
  if (!client_socket.ok()) return client_socket.status();
  std::unique_ptr<RendezvousHost> rendezvous;
  if (!orchestrator_options.rendezvous_endpoint.empty()) {
    absl::StatusOr<std::unique_ptr<RendezvousHost>> host = RendezvousHost::Bind(
        context, orchestrator_options.rendezvous_endpoint,
        [&secure](zmq::socket_t& socket) { return secure.ConfigureRendezvousSocket(socket); },
        [log = options.log](absl::string_view line) {
          log(OrchestratorEvent{OrchestratorEvent::Level::kNotice,
                                absl::StrCat("rendezvous: ", line)});
        });
    if (!host.ok()) {
      return absl::Status(host.status().code(),
                          absl::StrCat("the rendezvous endpoint: ", host.status().message()));
    }
    rendezvous = *std::move(host);
    orchestrator_options.rendezvous_endpoint = rendezvous->endpoint();
  }
  std::unique_ptr<OrchestratorServer> server(
      new OrchestratorServer(std::move(options), std::move(context), *std::move(security),
                             *std::move(agent_socket), *std::move(client_socket)));
  server->clock_ = &clock;
  server->outbox_ = std::make_unique<RouterOutbox>(*server);
  server->rendezvous_ = std::move(rendezvous);
  server->orchestrator_ =
      std::make_unique<Orchestrator>(std::move(orchestrator_options), *server->outbox_, clock);
  if (server->rendezvous_) {
    Orchestrator* orchestrator = server->orchestrator_.get();
    server->rendezvous_->SetTaskFilter(
        [orchestrator](uint64_t task_id) { return orchestrator->TaskSpansAgents(task_id); });
  }
  return server;
}

OrchestratorServer::OrchestratorServer(OrchestratorServerOptions options, zmq::context_t context,
                                       std::unique_ptr<ServerSecurity> security,
                                       zmq::socket_t agent_socket, zmq::socket_t client_socket)
    : options_(std::move(options)),
      context_(std::move(context)),
      security_(std::move(security)),
      agent_socket_(std::move(agent_socket)),
      client_socket_(std::move(client_socket)),
      agent_endpoint_(agent_socket_.get(zmq::sockopt::last_endpoint)),
      client_endpoint_(client_socket_.get(zmq::sockopt::last_endpoint)) {}

OrchestratorServer::~OrchestratorServer() = default;

absl::Status OrchestratorServer::Run(const std::atomic<bool>& stop) {
  SteadyClock::time_point next_tick = SteadyClock::now() + options_.tick_interval;
  SteadyClock::time_point next_metrics = SteadyClock::now();
  // Time the loop spent past what it meant to (a wait that overran, or a turn's work) is the
  // process's own pause when it is that long: its agents are not blamed for it.
  const auto excuse_overrun = [this](SteadyClock::time_point since, SteadyClock::duration meant) {
    const SteadyClock::duration overrun = SteadyClock::now() - since - meant;
    if (overrun > kOwnPause) {
      orchestrator_->ExcuseOwnPause(std::chrono::duration<double>(overrun).count());
    }
  };
  while (!stop.load()) {
    const auto wait =
        std::max(std::chrono::milliseconds::zero(),
                 std::chrono::ceil<std::chrono::milliseconds>(next_tick - SteadyClock::now()));
    std::vector<zmq::pollitem_t> items = {{agent_socket_.handle(), 0, ZMQ_POLLIN, 0},
                                          {client_socket_.handle(), 0, ZMQ_POLLIN, 0}};
    if (rendezvous_) items.push_back({nullptr, rendezvous_->NotificationFd(), ZMQ_POLLIN, 0});
    const SteadyClock::time_point poll_start = SteadyClock::now();
    bool interrupted = false;
    try {
      zmq::poll(items, wait);
    } catch (const zmq::error_t& error) {
      if (error.num() != EINTR) return ZmqErrorStatus("waiting for messages", error);
      interrupted = true;  // a signal (SIGCONT among them): look at `stop` again
    }
    excuse_overrun(poll_start, wait);
    if (interrupted) continue;
    const SteadyClock::time_point turn_start = SteadyClock::now();
    if ((items[0].revents & ZMQ_POLLIN) != 0) {
      if (absl::Status status = ServeAgents(); !status.ok()) return status;
    }
    if ((items[1].revents & ZMQ_POLLIN) != 0) {
      if (absl::Status status = ServeClients(); !status.ok()) return status;
    }
    // Its descriptor is edge-triggered (sending may consume the edge): served every turn.
    if (rendezvous_) rendezvous_->Serve();
    if (SteadyClock::now() >= next_tick) {
      excuse_overrun(turn_start, SteadyClock::duration::zero());
      orchestrator_->Tick();
      for (const std::string& prefix : orchestrator_->TakeEndedRendezvousPrefixes()) {
        if (rendezvous_) rendezvous_->Forget(prefix);
      }
      next_tick = SteadyClock::now() + options_.tick_interval;
      if (SteadyClock::now() >= next_metrics) {
        if (options_.metrics != nullptr) options_.metrics->Publish(orchestrator_->MetricsPage());
        if (options_.each_second) {
          options_.each_second(
              [this](const ClientMessage& request) { return orchestrator_->Query(request); });
        }
        next_metrics = SteadyClock::now() + std::chrono::seconds(1);
      }
    }
    if (options_.on_turn) options_.on_turn(*orchestrator_);
    LogEvents();
  }
  return absl::OkStatus();
}

absl::Status OrchestratorServer::ServeAgents() {
  for (int i = 0; i < kMessagesPerTurn; ++i) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(agent_socket_);
    if (!frames.ok()) return frames.status();
    if (frames->empty()) break;
    const std::string agent = Printable(frames->front());
    if (frames->size() != 2) {
      malformed_.Report(absl::StrCat("agent ", agent),
                        absl::StrCat("dropped a message of ", frames->size() - 1,
                                     " parts (expected 1) from agent ", agent),
                        clock_->MonotonicSeconds());
      continue;
    }
    if (!security_->AcceptAgentMessage(Bytes(frames->front()), (*frames)[1])) continue;
    absl::StatusOr<DecodedControl> message = DecodeControlMessage(Bytes((*frames)[1]));
    if (!message.ok()) {
      malformed_.Report(absl::StrCat("agent ", agent),
                        absl::StrCat("dropped a malformed message from agent ", agent, ": ",
                                     message.status().message()),
                        clock_->MonotonicSeconds());
      continue;
    }
    const std::string agent_id(Bytes(frames->front()));
    if (options_.on_agent_message) options_.on_agent_message(agent_id, *message);
    orchestrator_->OnAgentMessage(agent_id, *message);
  }
  return absl::OkStatus();
}

absl::Status OrchestratorServer::ServeClients() {
  for (int i = 0; i < kMessagesPerTurn; ++i) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(client_socket_);
    if (!frames.ok()) return frames.status();
    if (frames->empty()) break;
    if (frames->size() != 2) {
      malformed_.Report(
          "clients",
          absl::StrCat("dropped a client message of ", frames->size() - 1, " parts (expected 1)"),
          clock_->MonotonicSeconds());
      continue;
    }
    ServeClient(frames->front(), (*frames)[1]);
  }
  return absl::OkStatus();
}

void OrchestratorServer::ServeClient(const zmq::message_t& identity,
                                     const zmq::message_t& payload) {
  const absl::string_view bytes = Bytes(payload);
  if (bytes.size() > static_cast<size_t>(kMaxFrameBytes)) {
    const std::string why = absl::StrCat("the request is ", bytes.size(),
                                         " bytes; the orchestrator reads at most ", kMaxFrameBytes);
    malformed_.Report("clients", absl::StrCat("refused a client request: ", why),
                      clock_->MonotonicSeconds());
    Reply(identity, 0, ClientError{ClientErrorCode::kInvalidRequest, why});
    return;
  }
  absl::StatusOr<DecodedClient> request = DecodeClientMessage(bytes);
  if (!request.ok()) {
    const std::optional<RequestIdentity> header = ReadRequestIdentity(bytes);
    malformed_.Report(
        "clients", absl::StrCat("refused a malformed client request: ", request.status().message()),
        clock_->MonotonicSeconds());
    if (!header) {
      // Not even its id can be read: correlation id 0, which the client takes as the answer to
      // its one outstanding request.
      Reply(identity, 0,
            ClientError{ClientErrorCode::kInvalidRequest, std::string(request.status().message())});
      return;
    }
    if (header->protocol_major != kClientProtocolMajor) {
      Reply(identity, 0,
            ClientError{ClientErrorCode::kUnsupportedVersion,
                        std::string(request.status().message())});
    } else {
      Reply(identity, header->message_id,
            ClientError{ClientErrorCode::kInvalidRequest, std::string(request.status().message())});
    }
    return;
  }
  const uint64_t request_id = request->header.message_id;
  if (!IsClientRequest(request->message)) {
    Reply(identity, request_id,
          ClientError{
              ClientErrorCode::kInvalidRequest,
              absl::StrCat(ClientMessageName(request->message), " is a reply, not a request")});
    return;
  }
  ClientMessage reply = orchestrator_->OnClientRequest(request->message);
  AdaptReplyForClientMinor(request->version.minor, reply);
  if (security_->clients_use_curve()) {
    const std::optional<std::string> action =
        ClientActionLine(security_->ClientName(payload), request->message, reply);
    if (action) Log(*action, OrchestratorEvent::Level::kDetail);
  }
  Reply(identity, request_id, reply);
}

void OrchestratorServer::Reply(const zmq::message_t& identity, uint64_t correlation_id,
                               const ClientMessage& reply) {
  const std::string bytes = EncodeClientMessage(
      ClientHeader{++last_reply_id_, correlation_id, std::string(kOrchestratorSender)}, reply);
  std::string why;
  if (!SendTo(client_socket_, Bytes(identity), bytes, why)) {
    Log(absl::StrCat("could not send ", ClientMessageName(reply), " to a client: ", why));
  }
}

void OrchestratorServer::LogEvents() {
  for (const std::string& line : security_->TakeLog()) {
    Log(line, OrchestratorEvent::Level::kDetail);
  }
  for (const OrchestratorEvent& event : orchestrator_->TakeEvents()) options_.log(event);
}

void OrchestratorServer::Log(absl::string_view line, OrchestratorEvent::Level level) {
  options_.log(OrchestratorEvent{level, std::string(line)});
}

}  // namespace cohort
