#include "runtime/agent/orchestrator_connection.h"

#include <cstdio>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/daemon_log.h"
#include "runtime/control/socket_io.h"

namespace cohort {
namespace {

constexpr int kLingerMilliseconds = 1000;
// ZeroMQ's own heartbeats: a PING this often, the connection dropped after this long unanswered.
constexpr int kPingMilliseconds = 2000;
constexpr int kPingTimeoutMilliseconds = 10000;

void PrintDroppedControl(absl::string_view why) {
  LogDaemonLine("agent", absl::StrCat("dropped ", why));
}

}  // namespace

absl::StatusOr<std::unique_ptr<OrchestratorConnection>> OrchestratorConnection::Connect(
    const std::string& endpoint, const std::string& agent_id, DroppedHandler on_dropped,
    const std::optional<CurveClientConfig>& curve) {
  if (AgentIdProblem(agent_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent id '", absl::CHexEscape(agent_id),
                     "' must be 1 to 255 bytes of printable text (no line breaks or other control "
                     "characters)"));
  }
  if (!on_dropped) on_dropped = PrintDroppedControl;
  try {
    zmq::context_t context;
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, agent_id);
    socket.set(zmq::sockopt::linger, kLingerMilliseconds);
    socket.set(zmq::sockopt::maxmsgsize, kMaxFrameBytes);
    socket.set(zmq::sockopt::heartbeat_ivl, kPingMilliseconds);
    socket.set(zmq::sockopt::heartbeat_timeout, kPingTimeoutMilliseconds);
    if (curve) {
      if (absl::Status status = ConfigureCurveClient(socket, *curve); !status.ok()) return status;
    }
    auto watch = std::make_unique<ConnectionWatch>(context, socket.handle());  // before connect
    socket.connect(endpoint);
    return std::unique_ptr<OrchestratorConnection>(
        new OrchestratorConnection(endpoint, agent_id, std::move(on_dropped), std::move(context),
                                   std::move(socket), std::move(watch)));
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("connecting to the orchestrator at '", endpoint, "'"),
                          error);
  }
}

OrchestratorConnection::OrchestratorConnection(std::string endpoint, std::string agent_id,
                                               DroppedHandler on_dropped, zmq::context_t context,
                                               zmq::socket_t socket,
                                               std::unique_ptr<ConnectionWatch> watch)
    : endpoint_(std::move(endpoint)),
      agent_id_(std::move(agent_id)),
      on_dropped_(std::move(on_dropped)),
      context_(std::move(context)),
      socket_(std::move(socket)),
      watch_(std::move(watch)),
      fd_(socket_.get(zmq::sockopt::fd)) {}

bool OrchestratorConnection::Connected() {
  watch_->Update();
  return watch_->connected();
}

absl::StatusOr<uint64_t> OrchestratorConnection::Send(const ControlMessage& message,
                                                      uint64_t correlation_id) {
  const uint64_t id = ++last_message_id_;
  const std::string bytes =
      EncodeControlMessage(ControlHeader{id, correlation_id, agent_id_}, message);
  try {
    if (socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return id;
    return absl::UnavailableError(absl::StrCat("the queue to the orchestrator is full; ",
                                               ControlMessageName(message), " not sent"));
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("sending a ", ControlMessageName(message)), error);
  }
}

absl::Status OrchestratorConnection::ConnectAfresh() {
  try {
    socket_.disconnect(endpoint_);
    socket_.connect(endpoint_);
    return absl::OkStatus();
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(
        absl::StrCat("connecting afresh to the orchestrator at '", endpoint_, "'"), error);
  }
}

std::vector<DecodedControl> OrchestratorConnection::Drain() {
  std::vector<DecodedControl> received;
  while (true) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket_);
    if (!frames.ok()) {
      on_dropped_(frames.status().ToString());
      break;
    }
    if (frames->empty()) break;
    if (frames->size() != 1) {
      on_dropped_(absl::StrCat("a message of ", frames->size(),
                               " parts (expected 1) from the orchestrator at ", endpoint_));
      continue;
    }
    const zmq::message_t& frame = frames->front();
    absl::StatusOr<DecodedControl> decoded =
        DecodeControlMessage(absl::string_view(frame.data<char>(), frame.size()));
    if (!decoded.ok()) {
      on_dropped_(absl::StrCat("a message from the orchestrator at ", endpoint_, ": ",
                               decoded.status().message()));
      continue;
    }
    received.push_back(*std::move(decoded));
  }
  return received;
}

}  // namespace cohort
