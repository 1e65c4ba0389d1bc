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
//   unacked.MarkUnsentBefore(hello_id);                       // on the Ack of a hello
//   unacked.SendUnsent([&](const ControlMessage& m) { return Send(m); });
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
  // Takes every report last sent before `before_id` for not sent (a registration again, sent as
  // `before_id`: what went before may have been lost with the connection); the reports sent since
  // reach the orchestrator after it and are left as they are.
  void MarkUnsentBefore(uint64_t before_id);
  // Hands the reports not sent to `send`, oldest first, each kept under the message id `send`
  // returns, and stops at the first it cannot send (0): they stay in the order they were made,
  // for the orchestrator takes a report older than one it has recorded for a repeat.
  void SendUnsent(const std::function<uint64_t(const ControlMessage&)>& send);
  // Whether a kept report waits to be sent: a new one goes behind it (Keep(0, ...), SendUnsent).
  bool HasUnsent() const { return unsent_ > 0; }
  // Forgets them all (an orchestrator that acknowledges no report).
  void Clear() {
    reports_.clear();
    unsent_ = 0;
  }

  size_t size() const { return reports_.size(); }
  // How many were dropped for want of room since the previous call.
  uint64_t TakeDropped();

 private:
  struct Kept {
    uint64_t message_id = 0;
    ControlMessage report;
  };

  size_t capacity_;
  std::deque<Kept> reports_;  // in the order they were made
  size_t unsent_ = 0;         // of reports_, those with message_id 0
  uint64_t dropped_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_UNACKED_REPORTS_H_
