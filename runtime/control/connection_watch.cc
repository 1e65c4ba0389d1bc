#include "runtime/control/connection_watch.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

constexpr int kWatchedEvents = ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_DISCONNECTED;

}  // namespace

ConnectionWatch::ConnectionWatch(zmq::context_t& context, void* socket) : watched_(socket) {
  static std::atomic<uint64_t> next_id{1};
  const std::string address = absl::StrCat("inproc://cohort-connection-watch-", next_id++);
  if (zmq_socket_monitor(watched_, address.c_str(), kWatchedEvents) != 0) return;
  try {
    zmq::socket_t monitor(context, zmq::socket_type::pair);
    monitor.set(zmq::sockopt::linger, 0);
    monitor.connect(address);
    monitor_.emplace(std::move(monitor));
  } catch (const zmq::error_t&) {
    zmq_socket_monitor(watched_, nullptr, 0);
  }
}

ConnectionWatch::~ConnectionWatch() {
  if (monitor_) zmq_socket_monitor(watched_, nullptr, 0);
}

void ConnectionWatch::Update() {
  if (!monitor_) return;
  try {
    while (true) {
      // An event is two frames: 2 bytes of event id and 4 of value, then the endpoint.
      zmq::message_t event;
      if (!monitor_->recv(event, zmq::recv_flags::dontwait)) return;
      zmq::message_t endpoint;
      if (event.more() && !monitor_->recv(endpoint, zmq::recv_flags::dontwait)) return;
      if (event.size() < 6) continue;
      uint16_t id = 0;
      std::memcpy(&id, event.data(), sizeof id);
      switch (id) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
          connected_ = ever_connected_ = true;
          failure_.reset();
          refused_ = false;
          break;
        case ZMQ_EVENT_DISCONNECTED:
          // Also sent for a connection whose handshake failed: only a connected one is lost.
          if (connected_) ++losses_;
          connected_ = false;
          break;
        case ZMQ_EVENT_CONNECT_RETRIED:
          if (!failure_) failure_ = "nothing listens there (the connection was refused)";
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
          // Its ZAP handler said no: CURVE worked both ways, and this side's key is not authorized.
          failure_ =
              "it refused the handshake (authentication: this side's key, --key, is not among "
              "those it authorizes; its log names the key)";
          refused_ = true;
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
          failure_ =
              "it refused the handshake (one side uses CURVE and the other not; or, with CURVE on "
              "both, the server's public key given, --orchestrator-key, is not its own)";
          refused_ = true;
          break;
        default:
          break;
      }
    }
  } catch (const zmq::error_t&) {
    // A monitor that cannot be read tells nothing more.
  }
}

std::optional<std::string> ConnectionWatch::Failure() {
  Update();
  if (ever_connected_) return std::nullopt;
  return failure_;
}

std::optional<std::string> ConnectionWatch::Refusal() {
  std::optional<std::string> failure = Failure();
  return refused_ ? failure : std::nullopt;
}

}  // namespace cohort
