#include "runtime/control/worker_hub.h"

#include <cerrno>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/control/socket_io.h"

namespace cohort {
namespace {

absl::string_view View(const zmq::message_t& frame) {
  return absl::string_view(frame.data<char>(), frame.size());
}

// A ROUTER in `context` bound to `endpoint`, prepared by `setup` (when set) before the bind.
absl::StatusOr<zmq::socket_t> BindRouter(zmq::context_t& context, const std::string& endpoint,
                                         const WorkerHub::SocketSetup& setup) {
  try {
    zmq::socket_t socket(context, zmq::socket_type::router);
    socket.set(zmq::sockopt::router_mandatory, true);
    socket.set(zmq::sockopt::linger, static_cast<int>(kHubCloseTimeout.count()));
    socket.set(zmq::sockopt::maxmsgsize, kMaxFrameBytes);
    if (setup) {
      if (absl::Status status = setup(socket); !status.ok()) return status;
    }
    socket.bind(endpoint);
    return socket;
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("binding '", endpoint, "'"), error);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<WorkerHub>> WorkerHub::Bind(const std::string& endpoint,
                                                           DroppedHandler on_dropped) {
  std::optional<zmq::context_t> context;
  try {
    context.emplace();
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus("creating a ZeroMQ context", error);
  }
  absl::StatusOr<std::unique_ptr<WorkerHub>> hub =
      Bind(*context, endpoint, SocketSetup(), std::move(on_dropped));
  if (hub.ok()) (*hub)->owned_context_ = std::move(context);
  return hub;
}

absl::StatusOr<std::unique_ptr<WorkerHub>> WorkerHub::Bind(zmq::context_t& context,
                                                           const std::string& endpoint,
                                                           const SocketSetup& setup,
                                                           DroppedHandler on_dropped) {
  if (!on_dropped) on_dropped = PrintDropped;
  absl::StatusOr<zmq::socket_t> socket = BindRouter(context, endpoint, setup);
  if (!socket.ok()) return socket.status();
  std::string resolved = socket->get(zmq::sockopt::last_endpoint);
  return std::unique_ptr<WorkerHub>(
      new WorkerHub(std::move(resolved), std::move(on_dropped), *std::move(socket)));
}

WorkerHub::WorkerHub(std::string endpoint, DroppedHandler on_dropped, zmq::socket_t socket)
    : endpoint_(std::move(endpoint)),
      on_dropped_(std::move(on_dropped)),
      socket_(std::move(socket)) {}

WorkerHub::~WorkerHub() = default;

int WorkerHub::NotificationFd() { return socket_.get(zmq::sockopt::fd); }

std::vector<WorkerHub::Received> WorkerHub::Drain() {
  std::vector<Received> received;
  while (true) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket_);
    if (!frames.ok()) {
      on_dropped_(frames.status().ToString());
      break;
    }
    if (frames->empty()) break;
    // A ROUTER puts the sender's routing id in front of what the sender sent.
    std::string peer(View(frames->front()));
    if (frames->size() != 2) {
      on_dropped_(absl::StrCat("message of ", frames->size() - 1, " frames (expected 1) from peer ",
                               absl::BytesToHexString(peer)));
      continue;
    }
    absl::StatusOr<WorkerMessage> message = DecodeWorkerMessage(View((*frames)[1]));
    if (!message.ok()) {
      on_dropped_(absl::StrCat(message.status().ToString(), " (from peer ",
                               absl::BytesToHexString(peer), ")"));
      continue;
    }
    received.push_back(Received{std::move(peer), *std::move(message)});
  }
  return received;
}

std::vector<WorkerHub::Received> WorkerHub::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<Received> received = Drain();
    if (!received.empty()) return received;
    if (std::chrono::steady_clock::now() >= deadline) return received;
    if (absl::Status waited = WaitReadable(socket_, deadline, "waiting for messages");
        !waited.ok()) {
      on_dropped_(waited.ToString());
      return received;
    }
  }
}

absl::Status WorkerHub::Send(const std::string& peer, const WorkerCommand& command) {
  const std::string bytes = EncodeWorkerCommand(command);
  try {
    if (socket_.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait) &&
        socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
      return absl::OkStatus();
    }
    return absl::UnavailableError(absl::StrCat("the queue to peer ", absl::BytesToHexString(peer),
                                               " is full; ", WorkerCommandName(command),
                                               " not sent"));
  } catch (const zmq::error_t& error) {
    if (error.num() == EHOSTUNREACH) {
      return absl::NotFoundError(absl::StrCat("no worker connected as peer ",
                                              absl::BytesToHexString(peer), "; ",
                                              WorkerCommandName(command), " not sent"));
    }
    return ZmqErrorStatus(absl::StrCat("sending a ", WorkerCommandName(command)), error);
  }
}

}  // namespace cohort
