// OrchestratorServer over loopback: the test plays agents and clients with DEALER sockets against
// a server running in a thread.
//
// Covered: an agent's AgentHello answered by Ack (correlated, from "orchestrator"); a client's
// ListAgents answered by an AgentTable listing that agent and its slots, correlated with the
// request; a message from an agent that never said hello answered with ErrorReply; garbage from an
// agent dropped (logged, no reply) and from a client answered with ClientError (correlation id 0),
// while the server keeps answering; a request over 16 MiB answered naming its size; undecodable
// requests whose header is readable answered with ClientError (an empty sender, another major);
// a reply type sent as a request refused; a message for an agent whose connection is gone not
// sent and logged; the bound endpoints resolved; a bind failure naming the endpoint; Run
// returning OK once stopped.
//
// With CURVE forced on loopback: an agent with an authorized key named as its id registers; one
// with an unknown key never gets an answer and the refusal is logged; one whose key is authorized
// under another name than its socket identity is dropped and logged; a client without CURVE gets
// no answer while an authorized one does, and what it changes is logged under its key's name.
// The rendezvous host answers a worker presenting an authorized key, and never one without a key
// or with an unknown one (their keys are not stored, their refusals logged). Without keys, a
// listener that needs CURVE, the rendezvous one included, keeps the server from starting, naming
// the flag.
#include "runtime/orchestrator/orchestrator_server.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "absl/strings/match.h"
#include "client_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/client_messages.h"
#include "runtime/control/control_messages.h"
#include "runtime/control/worker_link.h"
#include "runtime/orchestrator/server_security.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr milliseconds kReplyTimeout{5000};
constexpr milliseconds kSilence{300};  // how long "no reply" is waited for

// One whole message from `socket` (a DEALER: one part), or nothing within `timeout`.
std::optional<std::string> Receive(zmq::socket_t& socket, milliseconds timeout) {
  std::vector<zmq::pollitem_t> items = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  if (zmq::poll(items, timeout) == 0) return std::nullopt;
  zmq::message_t frame;
  if (!socket.recv(frame, zmq::recv_flags::dontwait)) return std::nullopt;
  return frame.to_string();
}

void SendBytes(zmq::socket_t& socket, const std::string& bytes) {
  ASSERT_TRUE(socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait));
}

// An experiment of one 10-batch trial of `slots` slots, whose plugin is never loaded (no agent
// here runs workers).
std::string TenBatchExperiment(const std::string& name, uint32_t slots) {
  return absl::StrCat("name: ", name, R"(
entrypoint: /plugins/never-loaded.so
hyperparameters:
  global_batch_size: 16
resources:
  slots_per_trial: )",
                      slots, R"(
searcher:
  name: single
  metric: loss
  max_length:
    batches: 10
)");
}

AgentHello HelloWithCpuSlots(const std::string& agent_id, uint32_t slots) {
  AgentHello hello{agent_id, "test", "host-of-" + agent_id, {}, {}};
  for (uint32_t index = 0; index < slots; ++index) {
    hello.slots.push_back(AgentSlot{index, SlotKind::kCpu, -1, "cpu"});
  }
  return hello;
}

// A client envelope with another protocol major, as a newer client would send.
std::string EnvelopeOfMajor(uint16_t major, uint64_t message_id) {
  namespace wire = ::cohort::fbs::client;
  flatbuffers::FlatBufferBuilder builder;
  const auto sender = builder.CreateString("future-cli");
  const auto message = wire::CreateListAgents(builder);
  builder.Finish(wire::CreateClientEnvelope(builder, major, 0, message_id, 0, sender,
                                            wire::ClientMessage::ListAgents, message.Union()),
                 wire::ClientEnvelopeIdentifier());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

class OrchestratorServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/orchestrator_server_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    state_dir_ = pattern;

    OrchestratorServerOptions options;
    options.agent_endpoint = "tcp://127.0.0.1:*";
    options.client_endpoint = "tcp://127.0.0.1:*";
    options.tick_interval = milliseconds(20);
    options.log = [this](const OrchestratorEvent& event) {
      const std::lock_guard<std::mutex> lock(log_mutex_);
      log_.push_back(event.line);
    };
    Configure(options);
    OrchestratorOptions orchestrator_options;
    orchestrator_options.state_dir = state_dir_;
    orchestrator_options.rendezvous_endpoint = rendezvous_endpoint_;
    absl::StatusOr<std::unique_ptr<OrchestratorServer>> server =
        OrchestratorServer::Bind(options, orchestrator_options, SystemClock());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    runner_ = std::thread([this] { run_status_ = server_->Run(stop_); });
  }

  void TearDown() override {
    stop_ = true;
    if (runner_.joinable()) runner_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_;
    server_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(state_dir_, ignored);
  }

  // Adjusts the server's options before it binds.
  virtual void Configure(OrchestratorServerOptions&) {}

  // Where the rendezvous host binds; empty: no rendezvous host.
  std::string rendezvous_endpoint_;

  // A DEALER connected to `endpoint`; a CURVE client when `curve` is set.
  zmq::socket_t Dealer(const std::string& endpoint, const std::string& identity = "",
                       const std::optional<CurveClientConfig>& curve = std::nullopt) {
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    if (!identity.empty()) socket.set(zmq::sockopt::routing_id, identity);
    socket.set(zmq::sockopt::linger, 0);
    if (curve) {
      EXPECT_TRUE(ConfigureCurveClient(socket, *curve).ok());
    }
    socket.connect(endpoint);
    return socket;
  }

  zmq::socket_t Agent(const std::string& agent_id) {
    return Dealer(server_->agent_endpoint(), agent_id);
  }
  zmq::socket_t Client() { return Dealer(server_->client_endpoint()); }

  // The control messages the agent socket receives until one answers `message_id`.
  std::optional<DecodedControl> AnswerTo(zmq::socket_t& agent, uint64_t message_id) {
    while (std::optional<std::string> bytes = Receive(agent, kReplyTimeout)) {
      absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(*bytes);
      EXPECT_TRUE(decoded.ok()) << decoded.status();
      if (decoded.ok() && decoded->header.correlation_id == message_id) return *decoded;
    }
    return std::nullopt;
  }

  // Sends `request` with `message_id` and returns the decoded reply.
  std::optional<DecodedClient> Ask(zmq::socket_t& client, uint64_t message_id,
                                   const ClientMessage& request) {
    SendBytes(client, EncodeClientMessage(ClientHeader{message_id, 0, "test-cli"}, request));
    return ReplyOn(client);
  }

  std::optional<DecodedClient> ReplyOn(zmq::socket_t& client) {
    std::optional<std::string> bytes = Receive(client, kReplyTimeout);
    if (!bytes) return std::nullopt;
    absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(*bytes);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return std::nullopt;
    return *decoded;
  }

  void RegisterAgent(zmq::socket_t& agent, const std::string& agent_id, uint32_t slots) {
    SendBytes(agent, EncodeControlMessage(ControlHeader{1, 0, agent_id},
                                          HelloWithCpuSlots(agent_id, slots)));
    std::optional<DecodedControl> answer = AnswerTo(agent, 1);
    ASSERT_TRUE(answer.has_value()) << "no answer to AgentHello";
    EXPECT_TRUE(std::holds_alternative<Ack>(answer->message))
        << DescribeControlMessage(answer->message);
    EXPECT_EQ(answer->header.sender, kOrchestratorSender);
    EXPECT_NE(answer->header.message_id, 0u);
  }

  // Whether a log line containing `text` appears within the reply timeout.
  bool Logged(absl::string_view text) {
    const auto deadline = std::chrono::steady_clock::now() + kReplyTimeout;
    do {
      {
        const std::lock_guard<std::mutex> lock(log_mutex_);
        for (const std::string& line : log_) {
          if (absl::StrContains(line, text)) return true;
        }
      }
      std::this_thread::sleep_for(milliseconds(10));
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }

  std::string state_dir_;
  zmq::context_t context_;
  std::unique_ptr<OrchestratorServer> server_;
  std::atomic<bool> stop_{false};
  absl::Status run_status_;
  std::thread runner_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

TEST_F(OrchestratorServerTest, ResolvesTheBoundEndpoints) {
  EXPECT_THAT(server_->agent_endpoint(), StartsWith("tcp://127.0.0.1:"));
  EXPECT_THAT(server_->client_endpoint(), StartsWith("tcp://127.0.0.1:"));
  EXPECT_FALSE(absl::EndsWith(server_->agent_endpoint(), ":*"));
  EXPECT_NE(server_->agent_endpoint(), server_->client_endpoint());
}

TEST_F(OrchestratorServerTest, RegistersAnAgentAndListsItToClients) {
  zmq::socket_t agent = Agent("agent-1");
  RegisterAgent(agent, "agent-1", 2);

  zmq::socket_t client = Client();
  std::optional<DecodedClient> reply = Ask(client, 41, ListAgents{});
  ASSERT_TRUE(reply.has_value()) << "no reply to ListAgents";
  EXPECT_EQ(reply->header.correlation_id, 41u);
  EXPECT_EQ(reply->header.sender, kOrchestratorSender);
  const auto* table = std::get_if<AgentTable>(&reply->message);
  ASSERT_NE(table, nullptr) << ClientMessageName(reply->message);
  ASSERT_EQ(table->agents.size(), 1u);
  EXPECT_EQ(table->agents[0].agent_id, "agent-1");
  EXPECT_EQ(table->agents[0].hostname, "host-of-agent-1");
  EXPECT_EQ(table->agents[0].slots, 2u);
  EXPECT_EQ(table->agents[0].busy_slots, 0u);
  EXPECT_TRUE(table->agents[0].connected);
}

TEST_F(OrchestratorServerTest, RepliesCarryTheirRequestsIds) {
  zmq::socket_t client = Client();
  for (uint64_t id : {7u, 8u, 1000u}) {
    std::optional<DecodedClient> reply = Ask(client, id, ListExperiments{});
    ASSERT_TRUE(reply.has_value()) << "no reply to request " << id;
    EXPECT_EQ(reply->header.correlation_id, id);
    EXPECT_TRUE(std::holds_alternative<ExperimentList>(reply->message))
        << ClientMessageName(reply->message);
  }
}

TEST_F(OrchestratorServerTest, AnswersAnAgentThatNeverSaidHelloWithAnError) {
  zmq::socket_t stranger = Agent("agent-2");
  SendBytes(stranger, EncodeControlMessage(ControlHeader{5, 0, "agent-2"},
                                           AgentHeartbeat{"agent-2", 1.0, 0, {}}));
  std::optional<DecodedControl> answer = AnswerTo(stranger, 5);
  ASSERT_TRUE(answer.has_value()) << "no answer to a heartbeat before hello";
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(answer->message))
      << DescribeControlMessage(answer->message);
}

TEST_F(OrchestratorServerTest, DropsGarbageFromAnAgentAndKeepsServing) {
  zmq::socket_t agent = Agent("agent-1");
  SendBytes(agent, "certainly not a control envelope");
  EXPECT_TRUE(Logged("dropped a malformed message from agent agent-1: "));
  // A message in two parts is not a control message either.
  ASSERT_TRUE(agent.send(zmq::str_buffer("part"), zmq::send_flags::sndmore));
  ASSERT_TRUE(agent.send(zmq::str_buffer("another"), zmq::send_flags::none));
  // Repeated garbage from one peer is logged once a minute at most, not once per message.
  for (int i = 0; i < 50; ++i) SendBytes(agent, absl::StrCat("garbage number ", i));

  RegisterAgent(agent, "agent-1", 2);
  zmq::socket_t client = Client();
  std::optional<DecodedClient> reply = Ask(client, 3, ListAgents{});
  ASSERT_TRUE(reply.has_value());
  const auto* table = std::get_if<AgentTable>(&reply->message);
  ASSERT_NE(table, nullptr) << ClientMessageName(reply->message);
  ASSERT_EQ(table->agents.size(), 1u);
  EXPECT_EQ(table->agents[0].slots, 2u);
  const std::lock_guard<std::mutex> lock(log_mutex_);
  EXPECT_EQ(std::count_if(log_.begin(), log_.end(),
                          [](const std::string& line) {
                            return absl::StrContains(line, "from agent agent-1");
                          }),
            1)
      << "52 malformed messages of one agent made more than one log line";
}

// As docs/protocol.md says: a request that cannot be decoded at all is answered with ClientError
// and correlation id 0 (the client's one outstanding request takes it), and the server goes on.
TEST_F(OrchestratorServerTest, AnswersGarbageFromAClientWithAnErrorAndKeepsServing) {
  zmq::socket_t client = Client();
  for (const std::string& garbage :
       {std::string("certainly not a client envelope"), std::string(3, '\0')}) {
    SendBytes(client, garbage);
    std::optional<DecodedClient> reply = ReplyOn(client);
    ASSERT_TRUE(reply.has_value()) << "garbage was not answered";
    EXPECT_EQ(reply->header.correlation_id, 0u);
    const auto* error = std::get_if<ClientError>(&reply->message);
    ASSERT_NE(error, nullptr) << ClientMessageName(reply->message);
    EXPECT_EQ(error->code, ClientErrorCode::kInvalidRequest);
  }
  EXPECT_TRUE(Logged("refused a malformed client request: "));

  std::optional<DecodedClient> reply = Ask(client, 12, ListAgents{});
  ASSERT_TRUE(reply.has_value()) << "no reply after garbage";
  EXPECT_EQ(reply->header.correlation_id, 12u);
  EXPECT_TRUE(std::holds_alternative<AgentTable>(reply->message));
}

// A request over the 16 MiB a request may take is answered, naming its size, and logged (ZeroMQ
// used to drop it, and the connection, without a word).
TEST_F(OrchestratorServerTest, RefusesARequestOverTheSizeBoundNamingIt) {
  zmq::socket_t client = Client();
  SendBytes(client, std::string((size_t{16} << 20) + 1, 'x'));
  std::optional<DecodedClient> reply = ReplyOn(client);
  ASSERT_TRUE(reply.has_value()) << "no reply to an oversized request";
  EXPECT_EQ(reply->header.correlation_id, 0u);
  const auto* error = std::get_if<ClientError>(&reply->message);
  ASSERT_NE(error, nullptr) << ClientMessageName(reply->message);
  EXPECT_EQ(error->message,
            "the request is 16777217 bytes; the orchestrator reads at most 16777216");
  EXPECT_TRUE(Logged("refused a client request: the request is 16777217 bytes"));
  // The connection still serves.
  std::optional<DecodedClient> next = Ask(client, 13, ListAgents{});
  ASSERT_TRUE(next.has_value()) << "no reply after the oversized request";
  EXPECT_EQ(next->header.correlation_id, 13u);
}

TEST_F(OrchestratorServerTest, RefusesAMalformedRequestWhoseHeaderIsReadable) {
  zmq::socket_t client = Client();
  SendBytes(client, EncodeClientMessage(ClientHeader{21, 0, ""}, ListAgents{}));
  std::optional<DecodedClient> reply = ReplyOn(client);
  ASSERT_TRUE(reply.has_value()) << "no reply to a request with an empty sender";
  EXPECT_EQ(reply->header.correlation_id, 21u);
  const auto* error = std::get_if<ClientError>(&reply->message);
  ASSERT_NE(error, nullptr) << ClientMessageName(reply->message);
  EXPECT_EQ(error->code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(error->message, HasSubstr("sender"));
  EXPECT_TRUE(Logged("refused a malformed client request: "));
}

TEST_F(OrchestratorServerTest, RefusesAnotherProtocolMajor) {
  zmq::socket_t client = Client();
  SendBytes(client, EnvelopeOfMajor(kClientProtocolMajor + 1, 4));
  std::optional<DecodedClient> reply = ReplyOn(client);
  ASSERT_TRUE(reply.has_value()) << "no reply to another major";
  EXPECT_EQ(reply->header.correlation_id, 0u);
  const auto* error = std::get_if<ClientError>(&reply->message);
  ASSERT_NE(error, nullptr) << ClientMessageName(reply->message);
  EXPECT_EQ(error->code, ClientErrorCode::kUnsupportedVersion);
}

TEST_F(OrchestratorServerTest, RefusesAReplySentAsARequest) {
  zmq::socket_t client = Client();
  std::optional<DecodedClient> reply = Ask(client, 9, ClientAck{});
  ASSERT_TRUE(reply.has_value()) << "no reply to a ClientAck";
  EXPECT_EQ(reply->header.correlation_id, 9u);
  const auto* error = std::get_if<ClientError>(&reply->message);
  ASSERT_NE(error, nullptr) << ClientMessageName(reply->message);
  EXPECT_EQ(error->code, ClientErrorCode::kInvalidRequest);
  EXPECT_THAT(error->message, HasSubstr("ClientAck"));
}

TEST_F(OrchestratorServerTest, ReportsAMessageForAnAgentThatIsGone) {
  {
    zmq::socket_t agent = Agent("agent-1");
    RegisterAgent(agent, "agent-1", 1);
  }
  // The agent's connection is closed; give the server's socket time to notice.
  std::this_thread::sleep_for(milliseconds(500));
  // Its slot still counts until the agent timeout, so the trial's StartTask goes to it.
  zmq::socket_t client = Client();
  std::optional<DecodedClient> reply =
      Ask(client, 2, SubmitExperiment{TenBatchExperiment("gone", 1)});
  ASSERT_TRUE(reply.has_value()) << "no reply to SubmitExperiment";
  ASSERT_TRUE(std::holds_alternative<ExperimentSubmitted>(reply->message))
      << ClientMessageName(reply->message) << ": "
      << (std::holds_alternative<ClientError>(reply->message)
              ? std::get<ClientError>(reply->message).message
              : "");
  EXPECT_TRUE(Logged("could not send StartTask to agent agent-1: it is not connected"));
}

TEST(OrchestratorServerBindTest, NamesTheEndpointThatCannotBeBound) {
  std::string pattern = ::testing::TempDir() + "/orchestrator_server_bind.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  OrchestratorOptions orchestrator_options;
  orchestrator_options.state_dir = pattern;

  OrchestratorServerOptions first;
  first.agent_endpoint = "tcp://127.0.0.1:*";
  first.client_endpoint = "tcp://127.0.0.1:*";
  absl::StatusOr<std::unique_ptr<OrchestratorServer>> bound =
      OrchestratorServer::Bind(first, orchestrator_options, SystemClock());
  ASSERT_TRUE(bound.ok()) << bound.status();

  OrchestratorServerOptions clash;
  clash.agent_endpoint = "tcp://127.0.0.1:*";
  clash.client_endpoint = (*bound)->client_endpoint();  // already taken
  absl::StatusOr<std::unique_ptr<OrchestratorServer>> refused =
      OrchestratorServer::Bind(clash, orchestrator_options, SystemClock());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr((*bound)->client_endpoint()));
  EXPECT_THAT(refused.status().message(), HasSubstr("client"));

  OrchestratorServerOptions malformed;
  malformed.agent_endpoint = "not an endpoint";
  refused = OrchestratorServer::Bind(malformed, orchestrator_options, SystemClock());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("'not an endpoint'"));

  bound->reset();
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
}

// ---- CURVE

class CurveOrchestratorServerTest : public OrchestratorServerTest {
 protected:
  void Configure(OrchestratorServerOptions& options) override {
    server_keys_ = GenerateCurveKeyPair().value();
    AuthorizedKeys authorized;
    for (const char* name : {"agent-1", "agent-2", "alice", "slurm"}) {
      keys_[name] = GenerateCurveKeyPair().value();
      ASSERT_TRUE(authorized.Add(keys_[name].public_key, name).ok());
    }
    options.security.policy = CurvePolicy::kAlways;
    options.security.server_keys = server_keys_;
    options.security.authorized_keys = std::move(authorized);
    options.security.agent_key_families = {"slurm"};  // as under --resource-manager slurm
    rendezvous_endpoint_ = "tcp://127.0.0.1:*";
  }

  // The client config for a key pair known by `name`, or for a fresh unknown one.
  CurveClientConfig Curve(const std::string& name) {
    const CurveKeyPair keys =
        keys_.count(name) != 0 ? keys_.at(name) : GenerateCurveKeyPair().value();
    return CurveClientConfig{keys, name, server_keys_.public_key};
  }

  // Sends AgentHello as `agent_id` (the socket identity) and returns the answer, if any.
  std::optional<DecodedControl> Hello(zmq::socket_t& agent, const std::string& agent_id,
                                      std::chrono::milliseconds timeout) {
    SendBytes(agent,
              EncodeControlMessage(ControlHeader{1, 0, agent_id}, HelloWithCpuSlots(agent_id, 1)));
    std::optional<std::string> bytes = Receive(agent, timeout);
    if (!bytes) return std::nullopt;
    absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(*bytes);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return std::nullopt;
    return *decoded;
  }

  // The agents the orchestrator lists to an authorized client.
  std::vector<std::string> ListedAgents() {
    zmq::socket_t client = Dealer(server_->client_endpoint(), "", Curve("alice"));
    std::optional<DecodedClient> reply = Ask(client, 1, ListAgents{});
    EXPECT_TRUE(reply.has_value()) << "no reply to ListAgents";
    std::vector<std::string> ids;
    if (!reply) return ids;
    if (const auto* table = std::get_if<AgentTable>(&reply->message)) {
      for (const AgentRow& row : table->agents) ids.push_back(row.agent_id);
    }
    return ids;
  }

  // A worker's link to the rendezvous host; a CURVE client when `curve` is set.
  std::unique_ptr<WorkerLink> RendezvousLink(const std::optional<CurveClientConfig>& curve) {
    WorkerLinkOptions options;
    options.close_timeout = milliseconds(0);  // a refused link's messages are never delivered
    if (curve) {
      options.setup_socket = [curve](zmq::socket_t& socket) {
        return ConfigureCurveClient(socket, *curve);
      };
    }
    absl::StatusOr<std::unique_ptr<WorkerLink>> link =
        WorkerLink::Connect(server_->rendezvous_endpoint(), options);
    EXPECT_TRUE(link.ok()) << link.status();
    return link.ok() ? *std::move(link) : nullptr;
  }

  // The rendezvous host's answer to a get of `key` on `link`, or nullopt within `timeout`.
  static std::optional<RendezvousValue> Get(WorkerLink& link, const std::string& key,
                                            milliseconds timeout) {
    EXPECT_TRUE(link.Send(RendezvousGet{key, 7}).ok());
    std::optional<WorkerCommand> answer = link.WaitCommand(timeout);
    if (!answer) return std::nullopt;
    const auto* value = std::get_if<RendezvousValue>(&*answer);
    EXPECT_NE(value, nullptr) << WorkerCommandName(*answer);
    if (value == nullptr) return std::nullopt;
    return *value;
  }

  // Registers agent-1 and agent-2 (one slot each) and submits a 2-slot experiment, so task 1
  // spans both and its workers may keep keys under "task-1/". The agents' sockets stay open.
  void StartTaskSpanningAgents() {
    for (const char* id : {"agent-1", "agent-2"}) {
      agents_.push_back(Dealer(server_->agent_endpoint(), id, Curve(id)));
      ASSERT_TRUE(Hello(agents_.back(), id, kReplyTimeout).has_value()) << id;
    }
    zmq::socket_t client = Dealer(server_->client_endpoint(), "", Curve("alice"));
    std::optional<DecodedClient> reply =
        Ask(client, 3, SubmitExperiment{TenBatchExperiment("spanning", 2)});
    ASSERT_TRUE(reply.has_value() && std::holds_alternative<ExperimentSubmitted>(reply->message))
        << "the 2-slot experiment was not submitted";
    ASSERT_TRUE(Logged("task 1 trains to batch 10 on agent-1, agent-2"));
  }

  CurveKeyPair server_keys_;
  std::map<std::string, CurveKeyPair> keys_;
  std::vector<zmq::socket_t> agents_;
};

TEST_F(CurveOrchestratorServerTest, AnAgentWithAnAuthorizedKeyNamedAsItsIdRegisters) {
  zmq::socket_t agent = Dealer(server_->agent_endpoint(), "agent-1", Curve("agent-1"));
  std::optional<DecodedControl> answer = Hello(agent, "agent-1", kReplyTimeout);
  ASSERT_TRUE(answer.has_value()) << "no answer to AgentHello";
  EXPECT_TRUE(std::holds_alternative<Ack>(answer->message))
      << DescribeControlMessage(answer->message);
  EXPECT_THAT(ListedAgents(), ::testing::ElementsAre("agent-1"));
  EXPECT_TRUE(
      Logged("agents' listener: CURVE; clients' listener: CURVE; rendezvous listener: "
             "CURVE; 4 authorized keys"));
}

TEST_F(CurveOrchestratorServerTest, AnUnknownKeyIsNeverAnsweredAndItsRefusalLogged) {
  const CurveClientConfig stranger = Curve("agent-3");
  zmq::socket_t agent = Dealer(server_->agent_endpoint(), "agent-3", stranger);
  EXPECT_FALSE(Hello(agent, "agent-3", kSilence * 3).has_value());
  EXPECT_TRUE(Logged("refused CURVE client " + stranger.keys.public_key));
  EXPECT_TRUE(Logged("not authorized"));
  EXPECT_TRUE(ListedAgents().empty());
}

TEST_F(CurveOrchestratorServerTest, AnAgentCannotSpeakForAnother) {
  zmq::socket_t impostor = Dealer(server_->agent_endpoint(), "agent-1", Curve("agent-2"));
  EXPECT_FALSE(Hello(impostor, "agent-1", kSilence * 3).has_value());
  EXPECT_TRUE(
      Logged("agent socket identity 'agent-1' is not the authenticated key name 'agent-2'"));
  EXPECT_TRUE(ListedAgents().empty());
}

TEST_F(CurveOrchestratorServerTest, AFamilyKeySpeaksForItsFamilyOfAgentsAlone) {
  // The key named "slurm" is every Slurm job's agents': ids made per job.
  zmq::socket_t member = Dealer(server_->agent_endpoint(), "slurm-12-0", Curve("slurm"));
  std::optional<DecodedControl> answer = Hello(member, "slurm-12-0", kReplyTimeout);
  ASSERT_TRUE(answer.has_value()) << "no answer to slurm-12-0's AgentHello";
  EXPECT_TRUE(std::holds_alternative<Ack>(answer->message));
  zmq::socket_t outsider = Dealer(server_->agent_endpoint(), "agent-9", Curve("slurm"));
  EXPECT_FALSE(Hello(outsider, "agent-9", kSilence * 3).has_value());
  EXPECT_TRUE(Logged("agent socket identity 'agent-9' is not the authenticated key name 'slurm'"));
  EXPECT_THAT(ListedAgents(), ::testing::ElementsAre("slurm-12-0"));
}

TEST_F(CurveOrchestratorServerTest, OnlyAuthorizedClientsAreAnsweredAndTheirActionsNamed) {
  zmq::socket_t plain = Client();
  SendBytes(plain, EncodeClientMessage(ClientHeader{1, 0, "test-cli"}, ListAgents{}));
  EXPECT_FALSE(Receive(plain, kSilence * 3).has_value()) << "a client without CURVE was answered";
  // ZeroMQ reports the failed handshake as "does not use CURVE" or, at times, with no detail.
  EXPECT_TRUE(Logged("security: refused a connection on " + server_->client_endpoint()));

  zmq::socket_t client = Dealer(server_->client_endpoint(), "", Curve("alice"));
  std::optional<DecodedClient> reply = Ask(client, 2, KillExperiment{99});
  ASSERT_TRUE(reply.has_value()) << "an authorized client got no answer";
  EXPECT_EQ(reply->header.correlation_id, 2u);
  EXPECT_TRUE(std::holds_alternative<ClientError>(reply->message));
  EXPECT_TRUE(Logged("client 'alice' was refused KillExperiment: "));
}

TEST_F(CurveOrchestratorServerTest, TheRendezvousAnswersAWorkerPresentingAnAuthorizedKey) {
  StartTaskSpanningAgents();
  // Workers present their agent's key; the name does not matter there.
  std::unique_ptr<WorkerLink> worker = RendezvousLink(Curve("agent-2"));
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Send(RendezvousSet{"task-1/attempt-0/rank-0", "127.0.0.1:4100"}).ok());
  std::optional<RendezvousValue> value = Get(*worker, "task-1/attempt-0/rank-0", kReplyTimeout);
  ASSERT_TRUE(value.has_value()) << "an authorized worker got no answer";
  EXPECT_EQ(value->request_id, 7u);
  EXPECT_TRUE(value->found);
  EXPECT_EQ(value->value, "127.0.0.1:4100");
}

TEST_F(CurveOrchestratorServerTest, TheRendezvousNeverAnswersAWorkerWithoutAnAuthorizedKey) {
  StartTaskSpanningAgents();
  std::unique_ptr<WorkerLink> plain = RendezvousLink(std::nullopt);
  const CurveClientConfig stranger = Curve("stranger");
  std::unique_ptr<WorkerLink> unknown = RendezvousLink(stranger);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(unknown, nullptr);
  // The server refuses these connections, so a send may also time out (it does when the refusal
  // comes before the message is queued, which load makes likely): what matters is that nothing
  // they send is stored or answered.
  (void)plain->Send(RendezvousSet{"task-1/attempt-0/rank-0", "10.6.6.6:1"});
  (void)unknown->Send(RendezvousSet{"task-1/attempt-0/rank-1", "10.6.6.6:2"});
  (void)unknown->Send(RendezvousGet{"task-1/attempt-0/rank-1", 1});
  (void)plain->Send(RendezvousGet{"task-1/attempt-0/rank-0", 7});
  EXPECT_FALSE(plain->WaitCommand(kSilence * 3).has_value())
      << "a worker without CURVE was answered";
  EXPECT_FALSE(unknown->WaitCommand(milliseconds(10)).has_value())
      << "a worker with an unknown key was answered";
  EXPECT_TRUE(Logged("security: refused a connection on " + server_->rendezvous_endpoint()));
  EXPECT_TRUE(Logged("refused CURVE client " + stranger.keys.public_key));

  std::unique_ptr<WorkerLink> worker = RendezvousLink(Curve("agent-1"));
  ASSERT_NE(worker, nullptr);
  for (const char* key : {"task-1/attempt-0/rank-0", "task-1/attempt-0/rank-1"}) {
    std::optional<RendezvousValue> value = Get(*worker, key, kReplyTimeout);
    ASSERT_TRUE(value.has_value()) << "an authorized worker got no answer";
    EXPECT_FALSE(value->found) << key << " was set by a refused worker";
  }
}

// An authorized peer still cannot make the orchestrator hold what it likes: keys of a task that
// does not span agents, or under a prefix the task's end would not clear, are dropped, a task's
// keys and bytes are bounded, and the drops are logged once, not once per message.
TEST_F(CurveOrchestratorServerTest, TheRendezvousHoldsOnlyWhatLiveTasksNeed) {
  StartTaskSpanningAgents();
  std::unique_ptr<WorkerLink> worker = RendezvousLink(Curve("agent-1"));
  ASSERT_NE(worker, nullptr);
  const std::string mebibyte(kMaxRendezvousValueBytes, 'x');
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(worker->Send(RendezvousSet{absl::StrCat("task-99/key-", i), mebibyte}).ok());
  }
  for (int i = 0; i < 17; ++i) {
    ASSERT_TRUE(worker->Send(RendezvousSet{absl::StrCat("task-1/key-", i), mebibyte}).ok());
  }
  std::optional<RendezvousValue> kept = Get(*worker, "task-1/key-14", kReplyTimeout);
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(kept->found) << "a live task's keys within the bound are kept";
  std::optional<RendezvousValue> past = Get(*worker, "task-1/key-16", kReplyTimeout);
  ASSERT_TRUE(past.has_value());
  EXPECT_FALSE(past->found) << "the 17th MiB of one task was kept";
  std::optional<RendezvousValue> stranger = Get(*worker, "task-99/key-0", kReplyTimeout);
  ASSERT_TRUE(stranger.has_value());
  EXPECT_FALSE(stranger->found) << "a key of no live task was kept";
  // Task 1's under another spelling of its prefix: Forget("task-1/") would never clear it.
  for (const char* key : {"task-01/key-0", "task-+1/key-0"}) {
    ASSERT_TRUE(worker->Send(RendezvousSet{key, "x"}).ok());
    std::optional<RendezvousValue> respelled = Get(*worker, key, kReplyTimeout);
    ASSERT_TRUE(respelled.has_value());
    EXPECT_FALSE(respelled->found) << key << " was kept";
  }
  EXPECT_TRUE(Logged("dropped rendezvous sets for keys of no live task spanning agents"));
  EXPECT_TRUE(
      Logged("dropped rendezvous sets for task 1: a task holds at most 65536 keys and "
             "16777216 bytes"));
  const std::lock_guard<std::mutex> lock(log_mutex_);
  EXPECT_EQ(std::count_if(log_.begin(), log_.end(),
                          [](const std::string& line) {
                            return absl::StrContains(line, "of no live task spanning agents");
                          }),
            1)
      << "40 drops logged more than once";
}

TEST(OrchestratorServerSecurityTest, RefusesToStartWithoutKeysWhereCurveIsNeeded) {
  std::string pattern = ::testing::TempDir() + "/orchestrator_server_curve.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  OrchestratorOptions orchestrator_options;
  orchestrator_options.state_dir = pattern;

  OrchestratorServerOptions exposed;
  exposed.agent_endpoint = "tcp://0.0.0.0:0";
  exposed.client_endpoint = "tcp://127.0.0.1:*";
  absl::StatusOr<std::unique_ptr<OrchestratorServer>> refused =
      OrchestratorServer::Bind(exposed, orchestrator_options, SystemClock());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "--listen tcp://0.0.0.0:0 is not a loopback address, so it needs CURVE: give --key "
            "and --authorized-keys (cohort keygen makes keys)");

  OrchestratorServerOptions always;
  always.agent_endpoint = "tcp://127.0.0.1:*";
  always.client_endpoint = "tcp://127.0.0.1:*";
  always.security.policy = CurvePolicy::kAlways;
  always.security.server_keys = GenerateCurveKeyPair().value();
  refused = OrchestratorServer::Bind(always, orchestrator_options, SystemClock());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("--curve always makes --listen tcp://127"));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("give --authorized-keys (cohort keygen"));

  OrchestratorServerOptions exposed_clients;
  exposed_clients.agent_endpoint = "tcp://127.0.0.1:*";
  exposed_clients.client_endpoint = "tcp://0.0.0.0:0";
  refused = OrchestratorServer::Bind(exposed_clients, orchestrator_options, SystemClock());
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("--client-listen tcp://0.0.0.0:0 is not"));

  OrchestratorServerOptions local;
  local.agent_endpoint = "tcp://127.0.0.1:*";
  local.client_endpoint = "tcp://127.0.0.1:*";
  OrchestratorOptions exposed_rendezvous = orchestrator_options;
  exposed_rendezvous.rendezvous_endpoint = "tcp://0.0.0.0:0";
  refused = OrchestratorServer::Bind(local, exposed_rendezvous, SystemClock());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "--rendezvous-listen tcp://0.0.0.0:0 is not a loopback address, so it needs CURVE: "
            "give --key and --authorized-keys (cohort keygen makes keys)");

  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
}

TEST(ClientActionLineTest, NamesTheClientAndTheOutcomeOfWhatChanges) {
  EXPECT_EQ(ClientActionLine("alice", SubmitExperiment{"name: x"}, ExperimentSubmitted{4, {}}),
            "client 'alice' submitted experiment 4");
  EXPECT_EQ(ClientActionLine("alice", KillExperiment{4}, ClientAck{}),
            "client 'alice' killed experiment 4");
  EXPECT_EQ(ClientActionLine("bob", KillExperiment{5},
                             ClientError{ClientErrorCode::kNotFound, "no experiment 5"}),
            "client 'bob' was refused KillExperiment: no experiment 5");
  EXPECT_EQ(ClientActionLine("alice", ListAgents{}, AgentTable{}), std::nullopt);
}

}  // namespace
}  // namespace cohort
