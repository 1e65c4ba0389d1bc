// UnackedReports: the task reports (TaskMetricsReport, TaskCheckpointReport) an agent has sent
// and its orchestrator has not acknowledged yet, oldest first, kept to be sent again once the
// agent is registered again (docs/protocol.md, "Reconnecting after an orchestrator restart").
// Reports sent while the orchestrator is away (stopped, restarting, or its host unreachable) are
// otherwise lost with the connection, and the trial's record has a gap there.
//
// At most `capacity` are kept: past it, the oldest are dropped (a very long outage), and counted
// for the agent to say so once.
//
//   UnackedReports unacked;
//   unacked.Keep(Send(report), report);
//   unacked.Acknowledged(ack.correlation_id);               // on an Ack
//   unacked.SendAgain(hello_id, [&](const ControlMessage& m) { return Send(m); });
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_AGENT_UNACKED_REPORTS_H_
#define COHORT_RUNTIME_AGENT_UNACKED_REPORTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include "runtime/control/control_messages.h"

namespace cohort {

// About 10 minutes of a trial reporting ten times a second.
inline constexpr size_t kMaxUnackedReports = 6000;

class UnackedReports {
 public:
  explicit UnackedReports(size_t capacity = kMaxUnackedReports) : capacity_(capacity) {}

  // Keeps `report`, last sent as `message_id` (0: it could not be sent).
  void Keep(uint64_t message_id, ControlMessage report);
  // Forgets the report last sent as `message_id`; false when none is kept under it (the Ack
  // answers another message).
  bool Acknowledged(uint64_t message_id);
  // Hands every report last sent before `before_id` (or never sent) to `send`, oldest first, and
  // keeps it under the message id `send` returns (0: not sent). Reports sent since `before_id`
  // reach the orchestrator after it and are left as they are.
  void SendAgain(uint64_t before_id, const std::function<uint64_t(const ControlMessage&)>& send);
  // Forgets them all (an orchestrator that acknowledges no report).
  void Clear() { reports_.clear(); }

  size_t size() const { return reports_.size(); }
  // How many were dropped for want of room since the previous call.
  uint64_t TakeDropped();

 private:
  struct Kept {
    uint64_t message_id = 0;
    ControlMessage report;
  };

  size_t capacity_;
  std::deque<Kept> reports_;  // in the order they were first sent
  uint64_t dropped_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_UNACKED_REPORTS_H_
