// CURVE over real ZeroMQ on tcp://127.0.0.1: an authorized agent's messages arrive under its
// name; unknown keys, plain clients and clients that do not know the server's key are refused
// and logged, and none of their messages arrive.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/curve_client.h"
#include "runtime/security/curve_server.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Collects the authenticator's lines; safe to call from its thread.
class LogCapture {
 public:
  SecurityLogSink Sink() {
    return [this](absl::string_view line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.emplace_back(line);
      changed_.notify_all();
    };
  }

  // The first line containing every one of `parts`, waiting up to `timeout` for it.
  std::optional<std::string> WaitFor(const std::vector<std::string>& parts,
                                     std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::optional<std::string> found;
    changed_.wait_for(lock, timeout, [&] {
      for (const std::string& line : lines_) {
        bool all = true;
        for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
        if (all) found = line;
        if (all) return true;
      }
      return false;
    });
    return found;
  }

  // How many lines contain `part`.
  size_t Count(const std::string& part) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t count = 0;
    for (const std::string& line : lines_) count += line.find(part) != std::string::npos ? 1 : 0;
    return count;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

struct Arrival {
  std::string payload;
  std::string peer_name;
};

class CurveChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_keys_ = GenerateCurveKeyPair().value();
    agent_keys_ = GenerateCurveKeyPair().value();
    AuthorizedKeys keys;
    ASSERT_TRUE(keys.Add(agent_keys_.public_key, "agent-7").ok());
    absl::StatusOr<std::unique_ptr<CurveAuthenticator>> started =
        CurveAuthenticator::Start(context_, std::move(keys), log_.Sink());
    ASSERT_TRUE(started.ok()) << started.status();
    authenticator_ = *std::move(started);
    router_.set(zmq::sockopt::linger, 0);
    ASSERT_TRUE(authenticator_->ConfigureServer(router_, server_keys_).ok());
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  }

  void TearDown() override {
    router_.close();
    authenticator_.reset();
  }

  // A DEALER connected to the server: a CURVE client when `keys` is set, else a plain one.
  zmq::socket_t Connect(const CurveKeyPair* keys, const std::string& server_public_key) {
    zmq::socket_t dealer(context_, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    if (keys != nullptr) {
      EXPECT_TRUE(ConfigureCurveClient(dealer, *keys, server_public_key).ok());
    }
    dealer.connect(endpoint_);
    return dealer;
  }

  // The next message the server receives within `timeout`: [routing id, payload].
  std::optional<Arrival> Receive(std::chrono::milliseconds timeout) {
    std::vector<zmq::pollitem_t> items = {{router_.handle(), 0, ZMQ_POLLIN, 0}};
    if (zmq::poll(items, timeout) == 0) return std::nullopt;
    zmq::message_t routing_id;
    zmq::message_t payload;
    EXPECT_TRUE(router_.recv(routing_id).has_value());
    EXPECT_TRUE(routing_id.more());
    EXPECT_TRUE(router_.recv(payload).has_value());
    return Arrival{payload.to_string(), AuthenticatedPeerName(payload)};
  }

  zmq::context_t context_;
  LogCapture log_;
  std::unique_ptr<CurveAuthenticator> authenticator_;
  zmq::socket_t router_{context_, zmq::socket_type::router};
  CurveKeyPair server_keys_;
  CurveKeyPair agent_keys_;
  std::string endpoint_;
};

TEST_F(CurveChannelTest, AuthorizedClientArrivesUnderItsName) {
  zmq::socket_t agent = Connect(&agent_keys_, server_keys_.public_key);
  ASSERT_TRUE(agent.send(zmq::str_buffer("hello"), zmq::send_flags::none).has_value());
  std::optional<Arrival> arrival = Receive(10s);
  ASSERT_TRUE(arrival.has_value());
  EXPECT_EQ(arrival->payload, "hello");
  EXPECT_EQ(arrival->peer_name, "agent-7");
}

TEST_F(CurveChannelTest, UnknownKeyIsRefusedAndLogged) {
  const CurveKeyPair stranger = GenerateCurveKeyPair().value();
  zmq::socket_t client = Connect(&stranger, server_keys_.public_key);
  (void)client.send(zmq::str_buffer("kill task 1"), zmq::send_flags::dontwait);
  std::optional<std::string> line =
      log_.WaitFor({stranger.public_key, "127.0.0.1", "not authorized"}, 10s);
  ASSERT_TRUE(line.has_value());
  EXPECT_FALSE(Receive(300ms).has_value());
  // However often the client retried meanwhile, the refusal was reported once.
  EXPECT_EQ(log_.Count(stranger.public_key), 1u);
}

TEST_F(CurveChannelTest, PlainClientIsRefusedAndLogged) {
  zmq::socket_t client = Connect(nullptr, "");
  (void)client.send(zmq::str_buffer("submit work"), zmq::send_flags::dontwait);
  std::optional<std::string> line = log_.WaitFor({endpoint_, "does not use CURVE"}, 10s);
  ASSERT_TRUE(line.has_value());
  EXPECT_FALSE(Receive(300ms).has_value());
}

TEST_F(CurveChannelTest, ClientWithoutTheServerKeyIsRefusedAndLogged) {
  const std::string impostor_server = GenerateCurveKeyPair().value().public_key;
  zmq::socket_t client = Connect(&agent_keys_, impostor_server);
  (void)client.send(zmq::str_buffer("read metrics"), zmq::send_flags::dontwait);
  std::optional<std::string> line =
      log_.WaitFor({endpoint_, "does not hold this server's public key"}, 10s);
  ASSERT_TRUE(line.has_value());
  EXPECT_FALSE(Receive(300ms).has_value());
}

TEST_F(CurveChannelTest, RevokedKeyIsRefusedOnNewConnections) {
  authenticator_->SetAuthorizedKeys(AuthorizedKeys());
  zmq::socket_t agent = Connect(&agent_keys_, server_keys_.public_key);
  (void)agent.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
  ASSERT_TRUE(log_.WaitFor({agent_keys_.public_key, "not authorized"}, 10s).has_value());
  EXPECT_FALSE(Receive(300ms).has_value());
}

TEST_F(CurveChannelTest, OneAuthenticatorPerContext) {
  absl::StatusOr<std::unique_ptr<CurveAuthenticator>> second =
      CurveAuthenticator::Start(context_, AuthorizedKeys());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(CurveChannelTest, RejectsMismatchedServerKeys) {
  zmq::socket_t other(context_, zmq::socket_type::router);
  const CurveKeyPair mismatched{agent_keys_.public_key, server_keys_.secret_key};
  EXPECT_EQ(authenticator_->ConfigureServer(other, mismatched).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfigureCurveClient(other, mismatched, server_keys_.public_key).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfigureCurveClient(other, agent_keys_, "not a key").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CurveChannelTest, RefusesToConfigureSocketsAlreadyInUse) {
  zmq::socket_t bound(context_, zmq::socket_type::router);
  bound.set(zmq::sockopt::linger, 0);
  bound.bind("tcp://127.0.0.1:*");
  EXPECT_EQ(authenticator_->ConfigureServer(bound, server_keys_).code(),
            absl::StatusCode::kFailedPrecondition);
  zmq::socket_t connected(context_, zmq::socket_type::dealer);
  connected.set(zmq::sockopt::linger, 0);
  connected.connect(endpoint_);
  EXPECT_EQ(ConfigureCurveClient(connected, agent_keys_, server_keys_.public_key).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(AuthenticatedPeerNameTest, EmptyWithoutAuthentication) {
  zmq::context_t context;
  zmq::socket_t a(context, zmq::socket_type::pair);
  zmq::socket_t b(context, zmq::socket_type::pair);
  a.bind("inproc://plain");
  b.connect("inproc://plain");
  ASSERT_TRUE(b.send(zmq::str_buffer("x"), zmq::send_flags::none).has_value());
  zmq::message_t message;
  ASSERT_TRUE(a.recv(message).has_value());
  EXPECT_EQ(AuthenticatedPeerName(message), "");
  EXPECT_EQ(AuthenticatedPeerName(zmq::message_t("y", 1)), "");
}

}  // namespace
}  // namespace cohort
