// The agent's registration with its orchestrator: the AgentHello, sent again when it is due, the
// orchestrator's refusals, and what the agent says while nobody answers it (Agent, agent.h).
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/agent/agent.h"
#include "runtime/base/clock.h"

namespace cohort {

void Agent::SendHello() {
  AgentHello hello{options_.agent_id, options_.cohort_version, options_.hostname, table_.slots(),
                   table_.Entries()};
  if (const uint64_t id = Send(hello); id != 0) {
    hello_ids_.push_back(id);
    if (hello_ids_.size() > kHelloIdsKept) hello_ids_.erase(hello_ids_.begin());
  }
  hello_pending_ = true;
  last_hello_ = SystemClock().MonotonicSeconds();
}

bool Agent::IsHelloId(uint64_t message_id) const {
  return message_id != 0 &&
         std::find(hello_ids_.begin(), hello_ids_.end(), message_id) != hello_ids_.end();
}

void Agent::KeepRegistering(double now) {
  if (shutdown_requests_ > 0) return;
  if (hello_pending_ && orchestrator_connected_ &&
      now - std::max(last_hello_, connected_since_) >= kAgentUnheardHelloSeconds) {
    if (++unheard_hellos_ == 1) {
      Log(absl::StrCat("the orchestrator at ", options_.orchestrator,
                       " has not answered this agent's registration for ",
                       kAgentUnheardHelloSeconds,
                       " s on a connection that is up (it may still hold the one lost before): "
                       "registering on a fresh connection"));
    }
    if (options_.on_registration_unheard) options_.on_registration_unheard(unheard_hellos_);
    if (absl::Status status = connection_->ConnectAfresh(); !status.ok()) Log(status.message());
    SendHello();  // the next fresh connection waits as long again from this hello
    return;
  }
  if (!registered_ && now - last_hello_ >= kAgentHelloRetrySeconds) SendHello();
}

void Agent::HandleErrorReply(uint64_t correlation_id, const ErrorReply& error) {
  if (error.code == ControlErrorCode::kNotRegistered) {
    if (registered_) Log("the orchestrator does not know this agent: registering again");
    registered_ = false;
    orchestrator_minor_ = 0;              // it may be another orchestrator now: its Ack will tell
    if (hello_ids_.empty()) SendHello();  // one registration at a time; the tick retries a lost one
    return;
  }
  if (IsHelloId(correlation_id)) {
    hello_ids_.clear();
    hello_pending_ = false;
    Log(absl::StrCat("the orchestrator refused the registration (", error.message,
                     "); trying again in ", kAgentHelloRetrySeconds, " s"));
    if (options_.on_registration_refused) options_.on_registration_refused(error.message);
    return;
  }
  Log(absl::StrCat("the orchestrator answered message ", correlation_id, " with ",
                   DescribeControlMessage(error)));
}

void Agent::SendWaiting() {
  // While a registration waits for its answer, its Ack sends them.
  if (!registered_ || hello_pending_) return;
  if (unacked_reports_.HasUnsent()) {
    unacked_reports_.SendUnsent([this](const ControlMessage& report) { return Send(report); });
    if (unacked_reports_.HasUnsent()) return;
  }
  for (UnackedExit& pending : unacked_exits_) {
    if (pending.message_id != 0) continue;
    pending.message_id = Send(pending.exit);
    if (pending.message_id == 0) return;
  }
}

void Agent::TellOfUnansweredHellos(double now) {
  if (registered_ || shutdown_requests_ > 0) {
    unanswered_since_.reset();
    return;
  }
  // A refused handshake (a key the orchestrator does not take) is told at once, not as silence.
  if (std::optional<std::string> refused = connection_->RefusedHandshake();
      refused && *refused != refusal_told_) {
    refusal_told_ = *refused;
    Log(absl::StrCat("the orchestrator at ", options_.orchestrator,
                     " refused this agent: ", *refused, "; still trying"));
  }
  if (!unanswered_since_) {
    unanswered_since_ = unanswered_told_ = now;
    return;
  }
  if (now - unanswered_told_ < options_.unanswered_note_seconds) return;
  unanswered_told_ = now;
  // ZeroMQ connects quietly: nothing listening, a wrong key and a taken id all look like silence.
  Log(absl::StrCat("no answer from the orchestrator at ", options_.orchestrator, " for ",
                   static_cast<int>(now - *unanswered_since_),
                   " s; still trying. Is `cohort orchestrator` running and listening there",
                   options_.curve ? ", with the key this agent was given" : "",
                   "? Is another agent already connected under the id '", options_.agent_id,
                   "' (the orchestrator does not hear a second one)?"));
}

void Agent::TellOfDroppedMessage(absl::string_view why) {
  // Unreadable answers before it ever registered: likely another of the orchestrator's ports.
  const bool unreadable = absl::StrContains(why, "malformed control message");
  Log(absl::StrCat("dropped ", why,
                   ever_registered_ || !unreadable
                       ? ""
                       : "; is this the orchestrator's clients' port (--client-listen) rather "
                         "than its agents' (--listen)?"));
}

void Agent::WatchConnection(double now) {
  const bool connected = connection_->Connected();
  if (!told_connected_ && options_.on_connected && connection_->EverConnected()) {
    told_connected_ = true;
    options_.on_connected();
  }
  if (connected == orchestrator_connected_) return;
  orchestrator_connected_ = connected;
  if (!connected) {
    connection_lost_ = true;
    // Tasks do not need the orchestrator to train: they go on, their reports queued meanwhile.
    Log(absl::StrCat("lost the connection to the orchestrator at ", options_.orchestrator, " (",
                     runs_.size(), " task(s) here keep running); reconnecting"));
    return;
  }
  connected_since_ = now;
  if (!connection_lost_) return;
  connection_lost_ = false;
  Log(absl::StrCat("the connection to the orchestrator at ", options_.orchestrator,
                   " is back; registering again"));
  if (!hello_pending_ && shutdown_requests_ == 0) SendHello();
}

}  // namespace cohort
