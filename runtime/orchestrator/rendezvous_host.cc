#include "runtime/orchestrator/rendezvous_host.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

void PrintLine(absl::string_view line) {
  std::fprintf(stderr, "orchestrator: rendezvous: %.*s\n", static_cast<int>(line.size()),
               line.data());
}

}  // namespace

absl::StatusOr<std::unique_ptr<RendezvousHost>> RendezvousHost::Bind(
    zmq::context_t& context, const std::string& endpoint, const WorkerHub::SocketSetup& setup,
    LogFunction log) {
  if (!log) log = PrintLine;
  absl::StatusOr<std::unique_ptr<WorkerHub>> hub =
      WorkerHub::Bind(context, endpoint, setup, [log](absl::string_view why) {
        log(absl::StrCat("dropped a malformed message: ", why));
      });
  if (!hub.ok()) return hub.status();
  return std::unique_ptr<RendezvousHost>(new RendezvousHost(*std::move(hub), std::move(log)));
}

size_t RendezvousHost::Serve() {
  size_t served = 0;
  // The notification fd is edge-triggered: read until nothing is left.
  for (std::vector<WorkerHub::Received> received = hub_->Drain(); !received.empty();
       received = hub_->Drain()) {
    for (const WorkerHub::Received& message : received) {
      if (!service_.Handle(*hub_, message.peer, message.message)) {
        log_(absl::StrCat("dropped a ", WorkerMessageName(message.message),
                          ": this endpoint serves only the rendezvous"));
      }
    }
    served += received.size();
  }
  return served;
}

void RendezvousHost::Forget(absl::string_view prefix) {
  if (!prefix.empty()) service_.ClearPrefix(prefix);
}

}  // namespace cohort
