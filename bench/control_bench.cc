// The orchestrator <-> agent control channel against raw ZeroMQ with the same sockets and bytes.
// The transport is docs/protocol.md's: the orchestrator binds a ROUTER on tcp://127.0.0.1, the
// agent connects a DEALER whose routing identity is its agent id, one message part per envelope
// (the ROUTER sees [agent id, envelope]). Both ends are threads of this one process (the
// orchestrator's on the main thread, which takes all the times), so the bytes cross the kernel's
// loopback and the two threads, plus ZeroMQ's I/O thread, share this machine's cores. Each side
// of a figure uses the same two sockets and the same TCP connection; only the payload differs:
// the control side sends envelopes from EncodeControlMessage and runs DecodeControlMessage
// (Verifier included) on each one received, the raw side sends byte strings of exactly the same
// sizes and checks only their size. The agent first registers (AgentHello answered by Ack),
// untimed.
//
//   control_round_trip_latency   The orchestrator sends a TaskListRequest; the agent decodes it
//                                and answers a TaskList of 2 tasks of 8 ranks each (correlation
//                                id = the request's message id); the orchestrator decodes the
//                                answer and checks its type, sender and correlation id. Peer
//                                raw_zmq_round_trip_latency: the same exchange with byte strings
//                                of the two envelopes' sizes. The sides alternate round trip by
//                                round trip after untimed warm-up; each round trip is timed on
//                                its own and the median reported, in microseconds.
//   control_messages_per_s       The orchestrator sends a 2-byte "go"; the agent then streams
//                                20000 LogBatch envelopes of 16 log lines each (each encoded on
//                                its own, blocking sends); the orchestrator decodes each and
//                                checks its type, sender and line count. Time from the "go" to
//                                the last message decoded. Peer raw_zmq_messages_per_s: 20000
//                                byte strings of the envelope's size. Sides alternate over
//                                STREAM_ROUNDS rounds after one untimed round; medians reported.
//
//   control_bench [ROUND_TRIPS=20000] [STREAM_ROUNDS=7]
//
// Prints JSON lines {"name", "value", "unit", "peer", "peer_value", "ratio"}, ratio = value /
// peer_value: for the latency, how many times longer a control round trip takes; for the rate,
// the control channel's share of the raw message rate. The message sizes and the 90th/99th
// latency percentiles go to stderr.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/control/control_messages.h"

namespace {

using cohort::ControlHeader;
using cohort::DecodedControl;

constexpr char kAgentId[] = "bench-agent";
constexpr int kWarmUpRoundTrips = 1000;
constexpr int kStreamMessages = 20000;
constexpr int kLogLinesPerBatch = 16;
constexpr int kReceiveTimeoutMs = 10000;  // a stalled peer fails the bench instead of hanging it

enum class Side { kControl, kRaw };

// Side of the k-th (0 or 1) measurement of round `round`: the order flips every round.
Side SideOf(int round, int k) { return (round + k) % 2 == 0 ? Side::kControl : Side::kRaw; }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The messages both ends send, built once; each send still encodes its own envelope.
struct Workload {
  cohort::TaskList task_list;
  cohort::LogBatch log_batch;
  // Sizes of the encoded envelopes, which the raw side's byte strings copy.
  size_t request_bytes = 0;
  size_t reply_bytes = 0;
  size_t log_batch_bytes = 0;
};

Workload MakeWorkload() {
  Workload workload;
  for (uint64_t task = 0; task < 2; ++task) {
    cohort::TaskEntry entry{task + 1, task + 10, 3, cohort::TaskState::kRunning, {}, {}};
    for (uint32_t rank = 0; rank < 8; ++rank) {
      entry.slots.push_back(static_cast<uint32_t>(task) * 8 + rank);
      entry.ranks.push_back(rank);
    }
    workload.task_list.tasks.push_back(std::move(entry));
  }
  workload.log_batch.task_id = 1;
  for (int line = 0; line < kLogLinesPerBatch; ++line) {
    workload.log_batch.lines.push_back(
        {static_cast<uint32_t>(line % 8), cohort::LogStream::kStdout, 1.7e9 + line,
         absl::StrCat("[rank ", line % 8, "] batch ", 1200 + line,
                      ": loss 0.4213 accuracy 0.8812, 1520 records/s")});
  }
  // message ids are fixed-width on the wire: any non-zero id gives the same size.
  const ControlHeader orchestrator{1, 0, std::string(cohort::kOrchestratorSender)};
  const ControlHeader agent{1, 1, kAgentId};
  workload.request_bytes =
      cohort::EncodeControlMessage(orchestrator, cohort::TaskListRequest{}).size();
  workload.reply_bytes = cohort::EncodeControlMessage(agent, workload.task_list).size();
  workload.log_batch_bytes = cohort::EncodeControlMessage(agent, workload.log_batch).size();
  return workload;
}

absl::Status Receive(zmq::socket_t& socket, zmq::message_t& message) {
  if (!socket.recv(message)) {
    return absl::DeadlineExceededError(
        absl::StrCat("nothing received for ", kReceiveTimeoutMs, " ms"));
  }
  return absl::OkStatus();
}

absl::Status Send(zmq::socket_t& socket, absl::string_view bytes,
                  zmq::send_flags flags = zmq::send_flags::none) {
  if (!socket.send(zmq::buffer(bytes.data(), bytes.size()), flags)) {
    return absl::UnavailableError("send would block");
  }
  return absl::OkStatus();
}

// The ROUTER's receive: [agent id, payload], payload into `payload`.
absl::Status ReceiveFromAgent(zmq::socket_t& router, zmq::message_t& identity,
                              zmq::message_t& payload) {
  if (absl::Status s = Receive(router, identity); !s.ok()) return s;
  if (!identity.more() || identity.to_string_view() != kAgentId) {
    return absl::InternalError("a message not framed as [agent id, envelope]");
  }
  if (absl::Status s = Receive(router, payload); !s.ok()) return s;
  if (payload.more()) return absl::InternalError("a message of more than 2 parts");
  return absl::OkStatus();
}

absl::Status SendToAgent(zmq::socket_t& router, absl::string_view bytes) {
  if (absl::Status s = Send(router, kAgentId, zmq::send_flags::sndmore); !s.ok()) return s;
  return Send(router, bytes);
}

absl::Status CheckSize(const zmq::message_t& message, size_t expected, const char* what) {
  if (message.size() == expected) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, " of ", message.size(), " bytes, expected ", expected));
}

// The decoded `message`, when it is a valid envelope holding a T from `sender` answering
// `correlation_id`.
template <typename T>
absl::StatusOr<T> DecodeAs(const zmq::message_t& message, absl::string_view sender,
                           uint64_t correlation_id) {
  absl::StatusOr<DecodedControl> decoded = cohort::DecodeControlMessage(
      absl::string_view(static_cast<const char*>(message.data()), message.size()));
  if (!decoded.ok()) return decoded.status();
  T* payload = std::get_if<T>(&decoded->message);
  if (payload == nullptr || decoded->header.sender != sender ||
      decoded->header.correlation_id != correlation_id) {
    return absl::InternalError(
        absl::StrCat("unexpected ", cohort::ControlMessageName(decoded->message)));
  }
  return std::move(*payload);
}

// ---- the agent's end

class Agent {
 public:
  Agent(zmq::socket_t& dealer, const Workload& workload) : dealer_(dealer), workload_(workload) {}

  // Registers, then answers and streams in the order the orchestrator's end follows.
  absl::Status Run(int round_trips, int stream_rounds) {
    if (absl::Status s = Register(); !s.ok()) return s;
    for (int i = -kWarmUpRoundTrips; i < round_trips; ++i) {
      for (int k = 0; k < 2; ++k) {
        absl::Status s = SideOf(i, k) == Side::kControl ? AnswerControl() : AnswerRaw();
        if (!s.ok()) return s;
      }
    }
    for (int round = -1; round < stream_rounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        if (absl::Status s = Receive(dealer_, request_); !s.ok()) return s;  // "go"
        absl::Status s = SideOf(round, k) == Side::kControl ? StreamControl() : StreamRaw();
        if (!s.ok()) return s;
      }
    }
    // The socket drops what it still queues when closed: wait until everything has arrived.
    return Receive(dealer_, request_);  // "done"
  }

 private:
  absl::Status SendControl(const cohort::ControlMessage& message, uint64_t correlation_id) {
    return Send(dealer_, cohort::EncodeControlMessage(
                             ControlHeader{++last_message_id_, correlation_id, kAgentId}, message));
  }

  absl::Status Register() {
    if (absl::Status s = SendControl(cohort::AgentHello{kAgentId, "bench", "localhost", {}, {}}, 0);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Receive(dealer_, request_); !s.ok()) return s;
    return DecodeAs<cohort::Ack>(request_, cohort::kOrchestratorSender, last_message_id_).status();
  }

  absl::Status AnswerControl() {
    if (absl::Status s = Receive(dealer_, request_); !s.ok()) return s;
    absl::StatusOr<DecodedControl> decoded = cohort::DecodeControlMessage(
        absl::string_view(static_cast<const char*>(request_.data()), request_.size()));
    if (!decoded.ok()) return decoded.status();
    if (!std::holds_alternative<cohort::TaskListRequest>(decoded->message)) {
      return absl::InternalError("expected a TaskListRequest");
    }
    return SendControl(workload_.task_list, decoded->header.message_id);
  }

  absl::Status AnswerRaw() {
    if (absl::Status s = Receive(dealer_, request_); !s.ok()) return s;
    if (absl::Status s = CheckSize(request_, workload_.request_bytes, "raw request"); !s.ok()) {
      return s;
    }
    return Send(dealer_, raw_reply_);
  }

  absl::Status StreamControl() {
    for (int m = 0; m < kStreamMessages; ++m) {
      const std::string bytes = cohort::EncodeControlMessage(
          ControlHeader{++last_message_id_, 0, kAgentId}, workload_.log_batch);
      if (bytes.size() != workload_.log_batch_bytes) {
        return absl::InternalError("a LogBatch envelope changed size");
      }
      if (absl::Status s = Send(dealer_, bytes); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status StreamRaw() {
    for (int m = 0; m < kStreamMessages; ++m) {
      if (absl::Status s = Send(dealer_, raw_log_batch_); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  zmq::socket_t& dealer_;
  const Workload& workload_;
  const std::string raw_reply_ = std::string(workload_.reply_bytes, 'r');
  const std::string raw_log_batch_ = std::string(workload_.log_batch_bytes, 'l');
  zmq::message_t request_;
  uint64_t last_message_id_ = 0;
};

// ---- the orchestrator's end

struct Measurements {
  std::vector<double> control_round_trip, raw_round_trip;  // seconds each
  std::vector<double> control_rate, raw_rate;              // messages per second, per round
};

class Orchestrator {
 public:
  Orchestrator(zmq::socket_t& router, const Workload& workload)
      : router_(router), workload_(workload) {}

  absl::Status Run(int round_trips, int stream_rounds, Measurements& out) {
    if (absl::Status s = AcceptHello(); !s.ok()) return s;
    for (int i = -kWarmUpRoundTrips; i < round_trips; ++i) {
      for (int k = 0; k < 2; ++k) {
        const Side side = SideOf(i, k);
        const double start = Now();
        absl::Status s = side == Side::kControl ? RoundTripControl() : RoundTripRaw();
        const double seconds = Now() - start;
        if (!s.ok()) return s;
        if (i >= 0) {
          (side == Side::kControl ? out.control_round_trip : out.raw_round_trip).push_back(seconds);
        }
      }
    }
    for (int round = -1; round < stream_rounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        const Side side = SideOf(round, k);
        const double start = Now();
        if (absl::Status s = SendToAgent(router_, "go"); !s.ok()) return s;
        absl::Status s = side == Side::kControl ? ReceiveControlStream() : ReceiveRawStream();
        const double seconds = Now() - start;
        if (!s.ok()) return s;
        if (round >= 0) {
          (side == Side::kControl ? out.control_rate : out.raw_rate)
              .push_back(kStreamMessages / seconds);
        }
      }
    }
    return SendToAgent(router_, "done");
  }

 private:
  absl::Status SendControl(const cohort::ControlMessage& message, uint64_t correlation_id) {
    return SendToAgent(router_, cohort::EncodeControlMessage(
                                    ControlHeader{++last_message_id_, correlation_id,
                                                  std::string(cohort::kOrchestratorSender)},
                                    message));
  }

  absl::Status AcceptHello() {
    if (absl::Status s = ReceiveFromAgent(router_, identity_, reply_); !s.ok()) return s;
    absl::StatusOr<DecodedControl> hello = cohort::DecodeControlMessage(
        absl::string_view(static_cast<const char*>(reply_.data()), reply_.size()));
    if (!hello.ok()) return hello.status();
    if (!std::holds_alternative<cohort::AgentHello>(hello->message)) {
      return absl::InternalError("expected an AgentHello");
    }
    return SendControl(cohort::Ack{}, hello->header.message_id);
  }

  absl::Status RoundTripControl() {
    if (absl::Status s = SendControl(cohort::TaskListRequest{}, 0); !s.ok()) return s;
    if (absl::Status s = ReceiveFromAgent(router_, identity_, reply_); !s.ok()) return s;
    absl::StatusOr<cohort::TaskList> list =
        DecodeAs<cohort::TaskList>(reply_, kAgentId, last_message_id_);
    if (!list.ok()) return list.status();
    if (list->tasks.size() != workload_.task_list.tasks.size()) {
      return absl::InternalError("a TaskList with the wrong number of tasks");
    }
    return absl::OkStatus();
  }

  absl::Status RoundTripRaw() {
    if (absl::Status s = SendToAgent(router_, raw_request_); !s.ok()) return s;
    if (absl::Status s = ReceiveFromAgent(router_, identity_, reply_); !s.ok()) return s;
    return CheckSize(reply_, workload_.reply_bytes, "raw reply");
  }

  absl::Status ReceiveControlStream() {
    for (int m = 0; m < kStreamMessages; ++m) {
      if (absl::Status s = ReceiveFromAgent(router_, identity_, reply_); !s.ok()) return s;
      absl::StatusOr<cohort::LogBatch> batch = DecodeAs<cohort::LogBatch>(reply_, kAgentId, 0);
      if (!batch.ok()) return batch.status();
      if (batch->lines.size() != kLogLinesPerBatch) {
        return absl::InternalError("a LogBatch with the wrong number of lines");
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReceiveRawStream() {
    for (int m = 0; m < kStreamMessages; ++m) {
      if (absl::Status s = ReceiveFromAgent(router_, identity_, reply_); !s.ok()) return s;
      if (absl::Status s = CheckSize(reply_, workload_.log_batch_bytes, "raw message"); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  zmq::socket_t& router_;
  const Workload& workload_;
  const std::string raw_request_ = std::string(workload_.request_bytes, 'q');
  zmq::message_t identity_, reply_;
  uint64_t last_message_id_ = 0;
};

// ---- main

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const double position = fraction * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

void Report(const char* name, double value, const char* unit, const char* peer, double peer_value) {
  std::printf(
      "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"%s\", \"peer\": \"%s\", "
      "\"peer_value\": %.3f, \"ratio\": %.4f}\n",
      name, value, unit, peer, peer_value, value / peer_value);
  std::fflush(stdout);
}

void SetCommonOptions(zmq::socket_t& socket) {
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, kReceiveTimeoutMs);
  socket.set(zmq::sockopt::maxmsgsize, int64_t{16} << 20);
}

// `run()`, or UNAVAILABLE when it throws a ZeroMQ error.
template <typename Run>
absl::Status CatchingZmqErrors(Run run) {
  try {
    return run();
  } catch (const zmq::error_t& error) {
    return absl::UnavailableError(error.what());
  }
}

absl::Status RunBench(int round_trips, int stream_rounds, const Workload& workload,
                      Measurements& measurements) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  SetCommonOptions(router);
  router.set(zmq::sockopt::router_handover, 1);
  router.set(zmq::sockopt::router_mandatory, 1);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);

  absl::Status agent_result;
  std::thread agent_thread([&] {
    agent_result = CatchingZmqErrors([&] {
      zmq::socket_t dealer(context, zmq::socket_type::dealer);
      SetCommonOptions(dealer);
      dealer.set(zmq::sockopt::routing_id, kAgentId);
      dealer.connect(endpoint);
      return Agent(dealer, workload).Run(round_trips, stream_rounds);
    });
  });
  const absl::Status result = CatchingZmqErrors(
      [&] { return Orchestrator(router, workload).Run(round_trips, stream_rounds, measurements); });
  agent_thread.join();
  if (!result.ok()) {
    return absl::Status(result.code(), absl::StrCat("orchestrator: ", result.message()));
  }
  if (!agent_result.ok()) {
    return absl::Status(agent_result.code(), absl::StrCat("agent: ", agent_result.message()));
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  const int round_trips = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int stream_rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (argc > 3 || round_trips < 1 || stream_rounds < 1) {
    std::fprintf(stderr, "usage: %s [ROUND_TRIPS >= 1] [STREAM_ROUNDS >= 1]\n", argv[0]);
    return 2;
  }

  const Workload workload = MakeWorkload();
  Measurements measurements;
  const absl::Status result = CatchingZmqErrors(
      [&] { return RunBench(round_trips, stream_rounds, workload, measurements); });
  if (!result.ok()) {
    std::fprintf(stderr, "control_bench: %s\n", result.ToString().c_str());
    return 1;
  }

  std::fprintf(stderr,
               "control_bench: TaskListRequest %zu bytes, TaskList %zu bytes, LogBatch of %d "
               "lines %zu bytes\n",
               workload.request_bytes, workload.reply_bytes, kLogLinesPerBatch,
               workload.log_batch_bytes);
  const std::vector<double>& control = measurements.control_round_trip;
  const std::vector<double>& raw = measurements.raw_round_trip;
  std::fprintf(stderr,
               "control_bench: round trip p90/p99 in us: control %.1f/%.1f, raw %.1f/%.1f\n",
               Percentile(control, 0.9) * 1e6, Percentile(control, 0.99) * 1e6,
               Percentile(raw, 0.9) * 1e6, Percentile(raw, 0.99) * 1e6);
  Report("control_round_trip_latency", Percentile(control, 0.5) * 1e6, "us",
         "raw_zmq_round_trip_latency", Percentile(raw, 0.5) * 1e6);
  Report("control_messages_per_s", Percentile(measurements.control_rate, 0.5), "messages/s",
         "raw_zmq_messages_per_s", Percentile(measurements.raw_rate, 0.5));
  return 0;
}
