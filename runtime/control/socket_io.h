// What WorkerLink and WorkerHub share around a cppzmq socket: receiving one whole multipart
// message without blocking, ZeroMQ errors as absl::Status, the default report of a dropped
// message, and the channel's limits.
//
//   absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket);
//   if (frames.ok() && frames->empty()) { /* nothing waiting */ }
//
// Thread-safety: as the socket passed in (one thread at a time).
#ifndef COHORT_RUNTIME_CONTROL_SOCKET_IO_H_
#define COHORT_RUNTIME_CONTROL_SOCKET_IO_H_

#include <chrono>
#include <cstdint>
#include <vector>
#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// A peer sending a larger frame is disconnected by ZeroMQ; channel messages are far smaller.
inline constexpr int64_t kMaxFrameBytes = int64_t{16} << 20;

// How long closing a hub may wait to deliver commands still queued.
inline constexpr std::chrono::milliseconds kHubCloseTimeout{1000};

// All frames of the next message, or none if no message is waiting. Never blocks; an
// interrupted call is retried. UNAVAILABLE when the socket fails (its context is closing).
absl::StatusOr<std::vector<zmq::message_t>> ReceiveWaiting(zmq::socket_t& socket);

// "`action`: <ZeroMQ's text>" as INVALID_ARGUMENT for malformed endpoints and unsupported
// transports, UNAVAILABLE otherwise.
absl::Status ZmqErrorStatus(absl::string_view action, const zmq::error_t& error);

// The default handler for dropped messages: one line on stderr.
void PrintDropped(absl::string_view why);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_SOCKET_IO_H_
