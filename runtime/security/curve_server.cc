#include "runtime/security/curve_server.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "runtime/security/zap_answer.h"

namespace cohort {
namespace {

constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
constexpr int kControlTimeoutMs = 5000;
// The handshake failures that ZAP never sees; refusals by ZAP (HANDSHAKE_FAILED_AUTH) are
// reported with more detail by the handler itself.
constexpr int kWatchedEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_MONITOR_STOPPED;

std::atomic<uint64_t> next_inproc_id{1};

std::string UniqueInprocEndpoint(absl::string_view what) {
  return absl::StrCat("inproc://cohort-curve-", what, "-", next_inproc_id.fetch_add(1));
}

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string HandshakeFailureLine(uint16_t event, uint32_t value, absl::string_view endpoint) {
  std::string line = absl::StrCat("refused a connection on ", endpoint, ": ");
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) return line + "its handshake did not complete";
  if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    return line + "the peer does not use CURVE";
  if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) {
    return line + "its CURVE handshake failed (the peer does not hold this server's public key)";
  }
  return line + absl::StrFormat("ZeroMQ handshake protocol error 0x%08x", value);
}

}  // namespace

// Everything the authenticator's thread uses; its sockets live until the authenticator is
// destroyed, so a thread stopped by an error leaves ZAP requests unanswered (connections wait)
// rather than unauthenticated.
class CurveAuthenticator::Handler {
 public:
  Handler(zmq::context_t& context, zmq::socket_t zap, zmq::socket_t control, AuthorizedKeys keys,
          SecurityLogSink log)
      : context_(context),
        zap_(std::move(zap)),
        control_(std::move(control)),
        keys_(std::move(keys)),
        log_(log ? std::move(log) : SecurityLogSink(PrintSecurityLine)),
        refusals_(log_) {}

  void SetKeys(AuthorizedKeys keys) {
    std::lock_guard<std::mutex> lock(keys_mutex_);
    keys_ = std::move(keys);
  }

  // Serves until told to stop or the context terminates.
  void Run() {
    while (true) {
      try {
        std::vector<zmq::pollitem_t> items = {{zap_.handle(), 0, ZMQ_POLLIN, 0},
                                              {control_.handle(), 0, ZMQ_POLLIN, 0}};
        for (zmq::socket_t& monitor : monitors_)
          items.push_back({monitor.handle(), 0, ZMQ_POLLIN, 0});
        zmq::poll(items, std::chrono::milliseconds(-1));
        if (items[0].revents & ZMQ_POLLIN) AnswerZap();
        if ((items[1].revents & ZMQ_POLLIN) && !ObeyControl()) return;
        for (size_t i = items.size(); i-- > 2;) {
          if ((items[i].revents & ZMQ_POLLIN) && !ReadMonitor(monitors_[i - 2])) {
            monitors_.erase(monitors_.begin() + static_cast<std::ptrdiff_t>(i - 2));
          }
        }
      } catch (const zmq::error_t& error) {
        if (error.num() == EINTR) continue;
        if (error.num() != ETERM) {
          log_(absl::StrCat("the CURVE authenticator stopped after an error (", error.what(),
                            "): new connections will wait until it is restarted"));
        }
        return;
      }
    }
  }

 private:
  void AnswerZap() {
    std::vector<std::string> request;
    zmq::message_t frame;
    do {
      if (!zap_.recv(frame, zmq::recv_flags::dontwait)) return;
      request.push_back(frame.to_string());
    } while (frame.more());
    ZapAnswer answer;
    {
      std::lock_guard<std::mutex> lock(keys_mutex_);
      answer = AnswerZapRequest(request, keys_);
    }
    if (answer.refusal) refusals_.Report(*answer.refusal, MonotonicSeconds());
    for (size_t i = 0; i < answer.reply.size(); ++i) {
      const bool last = i + 1 == answer.reply.size();
      (void)zap_.send(zmq::buffer(answer.reply[i]),
                      last ? zmq::send_flags::none : zmq::send_flags::sndmore);
    }
  }

  // Handles one request from the owner: "stop" (returns false) or "watch <monitor endpoint>",
  // answered with "<endpoint> ok" or "<endpoint> <error>".
  bool ObeyControl() {
    zmq::message_t message;
    if (!control_.recv(message, zmq::recv_flags::dontwait)) return true;
    absl::string_view request(message.data<char>(), message.size());
    if (request == "stop") return false;
    if (!absl::ConsumePrefix(&request, "watch ")) return true;
    std::string reply(request);
    try {
      zmq::socket_t monitor(context_, zmq::socket_type::pair);
      monitor.set(zmq::sockopt::linger, 0);
      monitor.connect(std::string(request));
      monitors_.push_back(std::move(monitor));
      reply += " ok";
    } catch (const zmq::error_t& error) {
      absl::StrAppend(&reply, " ", error.what());
    }
    (void)control_.send(zmq::buffer(reply), zmq::send_flags::dontwait);
    return true;
  }

  // Reports one handshake failure; false once the watched socket has closed.
  bool ReadMonitor(zmq::socket_t& monitor) {
    zmq::message_t head;
    zmq::message_t endpoint;
    if (!monitor.recv(head, zmq::recv_flags::dontwait)) return true;
    if (!head.more() || !monitor.recv(endpoint) || head.size() < 6) return true;
    uint16_t event = 0;
    uint32_t value = 0;
    std::memcpy(&event, head.data<char>(), sizeof event);
    std::memcpy(&value, head.data<char>() + sizeof event, sizeof value);
    if (event == ZMQ_EVENT_MONITOR_STOPPED) return false;
    refusals_.Report(HandshakeFailureLine(event, value, endpoint.to_string()), MonotonicSeconds());
    return true;
  }

  zmq::context_t& context_;
  zmq::socket_t zap_;
  zmq::socket_t control_;
  std::vector<zmq::socket_t> monitors_;
  std::mutex keys_mutex_;
  AuthorizedKeys keys_;  // guarded by keys_mutex_
  SecurityLogSink log_;
  RefusalLog refusals_;
};

absl::StatusOr<std::unique_ptr<CurveAuthenticator>> CurveAuthenticator::Start(
    zmq::context_t& context, AuthorizedKeys keys, SecurityLogSink log) {
  try {
    zmq::socket_t zap(context, zmq::socket_type::rep);
    zap.set(zmq::sockopt::linger, 0);
    try {
      zap.bind(kZapEndpoint);
    } catch (const zmq::error_t& error) {
      if (error.num() != EADDRINUSE) throw;
      return absl::FailedPreconditionError("a ZAP handler already runs on this ZeroMQ context");
    }
    const std::string control_endpoint = UniqueInprocEndpoint("authenticator");
    zmq::socket_t owner_end(context, zmq::socket_type::pair);
    owner_end.set(zmq::sockopt::linger, 0);
    owner_end.set(zmq::sockopt::rcvtimeo, kControlTimeoutMs);
    owner_end.set(zmq::sockopt::sndtimeo, kControlTimeoutMs);
    owner_end.bind(control_endpoint);
    zmq::socket_t handler_end(context, zmq::socket_type::pair);
    handler_end.set(zmq::sockopt::linger, 0);
    handler_end.connect(control_endpoint);
    auto handler = std::make_unique<Handler>(context, std::move(zap), std::move(handler_end),
                                             std::move(keys), std::move(log));
    std::unique_ptr<CurveAuthenticator> authenticator(
        new CurveAuthenticator(std::move(handler), std::move(owner_end)));
    authenticator->thread_ =
        std::thread([handler = authenticator->handler_.get()] { handler->Run(); });
    return authenticator;
  } catch (const zmq::error_t& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot start the CURVE authenticator: ", error.what()));
  }
}

CurveAuthenticator::CurveAuthenticator(std::unique_ptr<Handler> handler, zmq::socket_t control)
    : handler_(std::move(handler)), control_(std::move(control)) {}

CurveAuthenticator::~CurveAuthenticator() {
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    try {
      (void)control_.send(zmq::str_buffer("stop"), zmq::send_flags::none);
    } catch (const zmq::error_t&) {
      // The thread has already stopped (its context is terminating).
    }
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status CurveAuthenticator::ConfigureServer(zmq::socket_t& socket,
                                                 const CurveKeyPair& server_keys) {
  absl::StatusOr<std::string> derived = CurvePublicKeyOf(server_keys.secret_key);
  if (!derived.ok())
    return absl::InvalidArgumentError("the server's secret key is not a CURVE key");
  if (*derived != server_keys.public_key) {
    return absl::InvalidArgumentError("the server's public key does not belong to its secret key");
  }
  const std::string monitor_endpoint = UniqueInprocEndpoint("monitor");
  try {
    // Options reach only endpoints bound later: a bound socket would keep a plain listener.
    if (!socket.get(zmq::sockopt::last_endpoint).empty()) {
      return absl::FailedPreconditionError("a socket must be made a CURVE server before it binds");
    }
    socket.set(zmq::sockopt::curve_server, true);
    socket.set(zmq::sockopt::curve_secretkey, server_keys.secret_key);
  } catch (const zmq::error_t& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot make a CURVE server socket: ", error.what()));
  }
  if (zmq_socket_monitor(socket.handle(), monitor_endpoint.c_str(), kWatchedEvents) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot watch the socket's handshakes: ", zmq_strerror(zmq_errno())));
  }
  return Watch(monitor_endpoint);
}

absl::Status CurveAuthenticator::Watch(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(control_mutex_);
  try {
    if (!control_.send(zmq::buffer(absl::StrCat("watch ", endpoint)), zmq::send_flags::none)) {
      return absl::UnavailableError("the CURVE authenticator's thread does not answer");
    }
    // Answers to requests that timed out earlier may still arrive: skip them.
    while (true) {
      zmq::message_t reply;
      if (!control_.recv(reply))
        return absl::UnavailableError("the CURVE authenticator's thread does not answer");
      absl::string_view text(reply.data<char>(), reply.size());
      if (!absl::ConsumePrefix(&text, endpoint + " ")) continue;
      if (text == "ok") return absl::OkStatus();
      return absl::UnavailableError(absl::StrCat("cannot watch the socket's handshakes: ", text));
    }
  } catch (const zmq::error_t& error) {
    return absl::UnavailableError(
        absl::StrCat("the CURVE authenticator's thread does not answer: ", error.what()));
  }
}

void CurveAuthenticator::SetAuthorizedKeys(AuthorizedKeys keys) {
  handler_->SetKeys(std::move(keys));
}

std::string AuthenticatedPeerName(const zmq::message_t& message) {
  const char* user_id = zmq_msg_gets(message.handle(), "User-Id");
  return user_id == nullptr ? std::string() : std::string(user_id);
}

}  // namespace cohort
