#include "runtime/orchestrator/rendezvous_host.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "runtime/base/clock.h"
#include "runtime/base/daemon_log.h"
#include "runtime/orchestrator/orchestrator.h"

namespace cohort {
namespace {

void PrintRendezvousLine(absl::string_view line) {
  LogDaemonLine("orchestrator", absl::StrCat("rendezvous: ", line));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RendezvousHost>> RendezvousHost::Bind(
    zmq::context_t& context, const std::string& endpoint, const WorkerHub::SocketSetup& setup,
    LogFunction log) {
  if (!log) log = PrintRendezvousLine;
  absl::StatusOr<std::unique_ptr<WorkerHub>> hub = WorkerHub::Bind(
      context, endpoint, setup,
      [log](absl::string_view why) { log(absl::StrCat("dropped a malformed message: ", why)); });
  if (!hub.ok()) return hub.status();
  return std::unique_ptr<RendezvousHost>(new RendezvousHost(*std::move(hub), std::move(log)));
}

RendezvousHost::RendezvousHost(std::unique_ptr<WorkerHub> hub, LogFunction log)
    : hub_(std::move(hub)),
      log_(std::move(log)),
      refusals_([this](absl::string_view line) { log_(line); }) {}

bool RendezvousHost::MayKeep(const std::string& key, const std::string& value) {
  const double now = SystemClock().MonotonicSeconds();
  // "task-12/rank-0": task 12, kept only under the very prefix the orchestrator forgets at the
  // task's end (RendezvousPrefix; "task-012/" or "task-+12/" would outlive the task).
  const size_t slash = key.find('/');
  const absl::string_view prefix = absl::string_view(key).substr(0, slash + 1);
  absl::string_view id = prefix.substr(0, slash);
  uint64_t task_id = 0;
  if (slash == std::string::npos || !absl::ConsumePrefix(&id, "task-") ||
      !absl::SimpleAtoi(id, &task_id) || prefix != RendezvousPrefix(task_id) ||
      (accepts_ && !accepts_(task_id))) {
    refusals_.Report("dropped rendezvous sets for keys of no live task spanning agents", now);
    return false;
  }
  TaskUse& use = use_[std::string(prefix)];
  const std::optional<size_t> held = service_.ValueBytes(key);  // a set replaces the value
  const size_t bytes = use.bytes - (held ? key.size() + *held : 0) + key.size() + value.size();
  if ((!held && use.keys + 1 > kMaxRendezvousKeysPerTask) || bytes > kMaxRendezvousBytesPerTask) {
    refusals_.Report(
        absl::StrCat("dropped rendezvous sets for task ", task_id, ": a task holds at most ",
                     kMaxRendezvousKeysPerTask, " keys and ", kMaxRendezvousBytesPerTask, " bytes"),
        now);
    return false;
  }
  use.keys += held ? 0 : 1;
  use.bytes = bytes;
  return true;
}

size_t RendezvousHost::Serve() {
  size_t served = 0;
  // The notification fd is edge-triggered: read until nothing is left.
  for (std::vector<WorkerHub::Received> received = hub_->Drain(); !received.empty();
       received = hub_->Drain()) {
    for (const WorkerHub::Received& message : received) Handle(message.peer, message.message);
    served += received.size();
  }
  return served;
}

void RendezvousHost::Handle(const std::string& peer, const WorkerMessage& message) {
  if (const auto* set = std::get_if<RendezvousSet>(&message);
      set != nullptr && !MayKeep(set->key, set->value)) {
    return;
  }
  if (!service_.Handle(*hub_, peer, message)) {
    log_(absl::StrCat("dropped a ", WorkerMessageName(message),
                      ": this endpoint serves only the rendezvous"));
  }
}

void RendezvousHost::Forget(absl::string_view prefix) {
  if (prefix.empty()) return;
  service_.ClearPrefix(prefix);
  if (auto use = use_.find(prefix); use != use_.end()) use_.erase(use);
}

}  // namespace cohort
