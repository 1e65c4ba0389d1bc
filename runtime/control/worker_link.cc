#include "runtime/control/worker_link.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/control/socket_io.h"

namespace cohort {

absl::StatusOr<std::unique_ptr<WorkerLink>> WorkerLink::Connect(const std::string& endpoint,
                                                                WorkerLinkOptions options) {
  try {
    zmq::context_t context;
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, static_cast<int>(options.close_timeout.count()));
    socket.set(zmq::sockopt::sndtimeo, static_cast<int>(options.send_timeout.count()));
    socket.set(zmq::sockopt::maxmsgsize, kMaxFrameBytes);
    if (options.setup_socket) {
      if (absl::Status status = options.setup_socket(socket); !status.ok()) return status;
    }
    socket.connect(endpoint);
    return std::unique_ptr<WorkerLink>(
        new WorkerLink(endpoint, std::move(context), std::move(socket)));
  } catch (const zmq::error_t& error) {
    return ZmqErrorStatus(absl::StrCat("connecting to '", endpoint, "'"), error);
  }
}

WorkerLink::WorkerLink(std::string endpoint, zmq::context_t context, zmq::socket_t socket)
    : endpoint_(std::move(endpoint)), context_(std::move(context)), socket_(std::move(socket)) {}

WorkerLink::~WorkerLink() = default;

absl::Status WorkerLink::Send(const WorkerMessage& message) {
  const std::string bytes = EncodeWorkerMessage(message);
  while (true) {
    try {
      if (socket_.send(zmq::buffer(bytes), zmq::send_flags::none)) return absl::OkStatus();
      return absl::UnavailableError(absl::StrCat("cannot queue a ", WorkerMessageName(message),
                                                 " for '", endpoint_,
                                                 "': the supervisor is not reading"));
    } catch (const zmq::error_t& error) {
      if (error.num() != EINTR) {
        return ZmqErrorStatus(absl::StrCat("sending a ", WorkerMessageName(message)), error);
      }
    }
  }
}

std::optional<WorkerCommand> WorkerLink::PollCommand() {
  while (true) {
    absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket_);
    if (!frames.ok()) {
      Drop(frames.status().ToString());
      return std::nullopt;
    }
    if (frames->empty()) return std::nullopt;
    if (frames->size() != 1) {
      Drop(absl::StrCat("command of ", frames->size(), " frames (expected 1)"));
      continue;
    }
    const zmq::message_t& frame = frames->front();
    absl::StatusOr<WorkerCommand> command =
        DecodeWorkerCommand(absl::string_view(frame.data<char>(), frame.size()));
    if (command.ok()) return *std::move(command);
    Drop(command.status().ToString());
  }
}

std::optional<WorkerCommand> WorkerLink::WaitCommand(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (std::optional<WorkerCommand> command = PollCommand()) return command;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    if (absl::Status waited = WaitReadable(socket_, deadline, "waiting for commands");
        !waited.ok()) {
      Drop(waited.ToString());
      return std::nullopt;
    }
  }
}

void WorkerLink::SetDroppedHandler(DroppedHandler on_dropped) {
  on_dropped_ = std::move(on_dropped);
}

void WorkerLink::Drop(absl::string_view why) {
  if (on_dropped_) {
    on_dropped_(why);
  } else {
    PrintDropped(why);
  }
}

}  // namespace cohort
