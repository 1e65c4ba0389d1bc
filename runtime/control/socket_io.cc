#include "runtime/control/socket_io.h"

#include <cerrno>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cohort {

absl::StatusOr<std::vector<zmq::message_t>> ReceiveWaiting(zmq::socket_t& socket) {
  // ZeroMQ delivers messages whole: once the first frame is there, so are the others, and only
  // the first receive can find nothing.
  std::vector<zmq::message_t> frames;
  while (frames.empty() || frames.back().more()) {
    zmq::message_t frame;
    try {
      if (!socket.recv(frame, zmq::recv_flags::dontwait)) return frames;
    } catch (const zmq::error_t& error) {
      if (error.num() == EINTR) continue;
      return ZmqErrorStatus("receive", error);
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

absl::Status WaitReadable(zmq::socket_t& socket, std::chrono::steady_clock::time_point deadline,
                          absl::string_view action) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left <= std::chrono::milliseconds::zero()) return absl::OkStatus();
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  try {
    zmq::poll(&item, 1, left);
  } catch (const zmq::error_t& error) {
    if (error.num() != EINTR) return ZmqErrorStatus(action, error);
  }
  return absl::OkStatus();
}

absl::Status ZmqErrorStatus(absl::string_view action, const zmq::error_t& error) {
  std::string message = absl::StrCat(action, ": ", error.what());
  switch (error.num()) {
    case EINVAL:
    case EPROTONOSUPPORT:
    case ENOCOMPATPROTO:
      return absl::InvalidArgumentError(message);
    default:
      return absl::UnavailableError(message);
  }
}

void PrintDropped(absl::string_view why) {
  std::fprintf(stderr, "cohort control: dropped %.*s\n", static_cast<int>(why.size()), why.data());
}

}  // namespace cohort
