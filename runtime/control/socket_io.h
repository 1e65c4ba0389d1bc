// What the channels' sockets share around cppzmq (WorkerLink, WorkerHub, the orchestrator's
// client): receiving one whole multipart message without blocking, waiting for one with a
// deadline, ZeroMQ errors as absl::Status, the default report of a dropped message, and the
// channel's limits.
//
//   while (true) {
//     absl::StatusOr<std::vector<zmq::message_t>> frames = ReceiveWaiting(socket);
//     if (!frames.ok() || !frames->empty()) break;      // an error, or a message
//     if (std::chrono::steady_clock::now() >= deadline) break;
//     if (!WaitReadable(socket, deadline, "waiting for commands").ok()) break;
//   }
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

// Returns once a message is waiting on `socket`, `deadline` has passed, or a signal interrupted
// the wait (the caller looks again). An error of the socket is ZmqErrorStatus(`action`, ...).
absl::Status WaitReadable(zmq::socket_t& socket, std::chrono::steady_clock::time_point deadline,
                          absl::string_view action);

// "`action`: <ZeroMQ's text>" as INVALID_ARGUMENT for malformed endpoints and unsupported
// transports, UNAVAILABLE otherwise.
absl::Status ZmqErrorStatus(absl::string_view action, const zmq::error_t& error);

// The default handler for dropped messages: one line on stderr.
void PrintDropped(absl::string_view why);

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_SOCKET_IO_H_
