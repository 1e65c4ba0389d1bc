#include "runtime/client/orchestrator_client.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/control/socket_io.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;

// How often a wait for a reply looks at what became of the connection.
constexpr std::chrono::milliseconds kWatchInterval(50);

// Whether `frames` is one reply to `message_id`: sets `*reply` to it, or `*dropped_why` to why
// it could not be read. A reply to another request leaves both alone. A ClientError with no
// correlation id answers the one request outstanding (the orchestrator could not read it).
bool MatchReply(const std::vector<zmq::message_t>& frames, uint64_t message_id,
                absl::StatusOr<DecodedClient>* reply, std::string* dropped_why) {
  if (frames.size() != 1) {
    *dropped_why = absl::StrCat("a message of ", frames.size(), " parts (expected 1)");
    return false;
  }
  absl::StatusOr<DecodedClient> decoded =
      DecodeClientMessage(absl::string_view(frames[0].data<char>(), frames[0].size()));
  if (!decoded.ok()) {
    *dropped_why = std::string(decoded.status().message());
    return false;
  }
  const bool unread_request =
      decoded->header.correlation_id == 0 && std::holds_alternative<ClientError>(decoded->message);
  if (decoded->header.correlation_id != message_id && !unread_request) return false;
  *reply = std::move(decoded);
  return true;
}

// A tcp:// endpoint's port must be a port and its host must resolve: ZeroMQ would retry either
// in silence, which looks like an orchestrator not running. Other transports are left to ZeroMQ.
absl::Status CheckTcpEndpoint(const std::string& endpoint) {
  constexpr absl::string_view kTcp = "tcp://";
  if (!absl::StartsWith(endpoint, kTcp)) return absl::OkStatus();
  const absl::string_view address = absl::string_view(endpoint).substr(kTcp.size());
  if (absl::StrContains(address, ';')) return absl::OkStatus();  // a source address: ZeroMQ's
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return absl::OkStatus();  // ZeroMQ names what is wrong
  std::string host(address.substr(0, colon));
  const absl::string_view port = address.substr(colon + 1);
  uint32_t number = 0;
  if (!absl::SimpleAtoi(port, &number) || number == 0 || number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the orchestrator's endpoint ", endpoint, " has no valid port (1 to 65535): '", port, "'"));
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int resolved = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  if (resolved != 0) {
    return absl::UnavailableError(absl::StrCat("no orchestrator at ", endpoint, ": its host '",
                                               host, "' does not resolve (",
                                               ::gai_strerror(resolved), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ClientErrorStatus(const ClientError& error) {
  switch (error.code) {
    case ClientErrorCode::kNotFound:
      return absl::NotFoundError(error.message);
    case ClientErrorCode::kInvalidRequest:
      return absl::InvalidArgumentError(error.message);
    case ClientErrorCode::kUnschedulable:
      return absl::FailedPreconditionError(error.message);
    case ClientErrorCode::kUnsupportedVersion:
      return absl::UnimplementedError(error.message);
    case ClientErrorCode::kUnspecified:
      break;
  }
  return absl::UnknownError(error.message);
}

absl::StatusOr<std::unique_ptr<OrchestratorClient>> OrchestratorClient::Connect(
    const std::string& endpoint, std::optional<CurveClientConfig> curve) {
  if (absl::Status reachable = CheckTcpEndpoint(endpoint); !reachable.ok()) return reachable;
  try {
    zmq::context_t context;
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::maxmsgsize, kMaxFrameBytes);
    if (curve) {
      if (absl::Status status = ConfigureCurveClient(socket, *curve); !status.ok()) return status;
    }
    auto watch = std::make_unique<ConnectionWatch>(context, socket.handle());
    socket.connect(endpoint);
    return std::unique_ptr<OrchestratorClient>(new OrchestratorClient(
        endpoint, curve.has_value(), std::move(context), std::move(socket), std::move(watch)));
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("connecting to the orchestrator at '", endpoint, "'"),
                          error);
  }
}

OrchestratorClient::OrchestratorClient(std::string endpoint, bool uses_curve,
                                       zmq::context_t context, zmq::socket_t socket,
                                       std::unique_ptr<ConnectionWatch> watch)
    : endpoint_(std::move(endpoint)),
      uses_curve_(uses_curve),
      context_(std::move(context)),
      socket_(std::move(socket)),
      watch_(std::move(watch)) {}

absl::Status OrchestratorClient::ConnectionFailed(const std::string& failure) const {
  const bool refused = absl::StartsWith(failure, "it refused");
  std::string message = refused ? absl::StrCat("the orchestrator at ", endpoint_,
                                               " refused the connection: ", failure)
                                : absl::StrCat("no orchestrator at ", endpoint_, ": ", failure,
                                               " (is `cohort orchestrator` running?)");
  if (refused && !uses_curve_) absl::StrAppend(&message, "; ", kCurveHint);
  return absl::UnavailableError(message);
}

absl::StatusOr<ClientMessage> OrchestratorClient::Request(const ClientMessage& request,
                                                          double timeout_seconds) {
  const uint64_t message_id = ++last_message_id_;
  const std::string bytes =
      EncodeClientMessage(ClientHeader{message_id, 0, kCliSenderName}, request);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, timeout_seconds)));
  try {
    if (!socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
      return absl::UnavailableError(absl::StrCat("the queue to the orchestrator at ", endpoint_,
                                                 " is full; ", ClientMessageName(request),
                                                 " not sent"));
    }
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("sending a ", ClientMessageName(request)), error);
  }

  std::string dropped_why;
  while (true) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket_);
    if (!frames.ok()) return frames.status();
    if (!frames->empty()) {
      absl::StatusOr<DecodedClient> reply;
      if (!MatchReply(*frames, message_id, &reply, &dropped_why)) continue;
      if (const auto* error = std::get_if<ClientError>(&reply->message)) {
        return ClientErrorStatus(*error);
      }
      return std::move(reply->message);
    }
    if (std::optional<std::string> failure = watch_->Failure()) return ConnectionFailed(*failure);
    if (Clock::now() >= deadline) break;
    // Short waits, so a refused connection is told at once rather than at the deadline.
    const Clock::time_point slice = std::min(deadline, Clock::now() + kWatchInterval);
    if (absl::Status waited = WaitReadable(socket_, slice, "waiting for the orchestrator");
        !waited.ok()) {
      return waited;
    }
  }
  // Once a handshake succeeded, the security mechanisms agree: the orchestrator went away, or is
  // too busy to answer.
  watch_->Update();  // reads the events not read yet
  const bool was_connected = watch_->ever_connected();
  std::string message = absl::StrFormat(
      "no answer from the orchestrator at %s within %g s (%s)", endpoint_, timeout_seconds,
      was_connected ? "the connection was made: has `cohort orchestrator` stopped, or is this its "
                      "agents' port (--listen) rather than its clients' (--client-listen)?"
                    : "is `cohort orchestrator` running?");
  if (!dropped_why.empty()) {
    absl::StrAppend(&message, "; dropped a message that could not be read: ", dropped_why);
  }
  if (!uses_curve_ && !was_connected) absl::StrAppend(&message, "; ", kCurveHint);
  return absl::UnavailableError(message);
}

}  // namespace cohort
