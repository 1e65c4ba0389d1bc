// What an agent may send an orchestrator of a given control protocol minor: docs/protocol.md's
// "Send only what the peer knows", in one place. The agent learns the orchestrator's minor from
// the Ack answering its AgentHello, and passes every outgoing message through here; until it
// knows, it assumes minor 0.
//
// Minor 1 added TaskProgress and LogStream::kAgent: an older orchestrator gets no TaskProgress,
// and LogBatch messages without their kAgent lines. Minor 5 added TaskCheckpointReport.restored:
// an older orchestrator gets no restored report (it would record a checkpoint written anew).
//
//   if (std::optional<ControlMessage> known = KnownAtMinor(message, orchestrator_minor)) {
//     connection.Send(*known);
//   }
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_AGENT_ORCHESTRATOR_MINOR_H_
#define COHORT_RUNTIME_AGENT_ORCHESTRATOR_MINOR_H_

#include <cstdint>
#include <optional>

#include "runtime/control/control_messages.h"

namespace cohort {

// `message` as far as a peer speaking minor `minor` knows it: unchanged when it knows all of it;
// a LogBatch without the lines it does not know; nullopt when nothing of it is left to send (a
// message type it does not know, a LogBatch all of whose lines it would refuse, a restored
// checkpoint report it would misread).
std::optional<ControlMessage> KnownAtMinor(const ControlMessage& message, uint16_t minor);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_ORCHESTRATOR_MINOR_H_
