// Fuzz target: the orchestrator's rendezvous (RendezvousHost), where the workers of tasks spanning
// agents set and get their addresses. Each input is a message script (message_script.h framing)
// whose steps mean, by tag % 3:
//
//   0   a worker message (worker.fbs bytes) from peer "peer-<(tag / 3) % 4>", decoded as the
//       host's hub decodes every frame and, when it decodes, handled as Serve handles it
//   1   task (tag / 3) % 4 + 1 starts, or ends if it is running; at its end the orchestrator's
//       Forget("task-<id>/") runs
//   2   a burst: the first two payload bytes (little-endian) give a count n, and n sets of
//       "task-<(tag / 3) % 4 + 1>/burst-<i>" to the rest of the payload follow (past the bound of
//       keys per task when n is large)
//
// Contract checked: no crash, leak or undefined behaviour; memory stays within the per-task
// bounds (a burst past them would exhaust it otherwise); every log line is one line of printable
// text, whatever peers sent; and once every task has ended no key is left, so nothing a peer sets
// outlives the tasks.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/message_script.h"
#include "runtime/control/worker_messages.h"
#include "runtime/orchestrator/rendezvous_host.h"

namespace cohort::fuzz {
namespace {

constexpr uint64_t kTasks = 4;

// One line of printable ASCII: what a log line must be, whatever a peer put in a key.
void CheckLogLine(absl::string_view line) {
  for (char c : line) {
    FUZZ_CHECK(c >= 0x20 && c < 0x7f, absl::StrCat("unprintable byte in a log line: ", line));
  }
}

// The host under test, bound once on loopback (its answers to the script's peers go nowhere: no
// such peer is connected, and the host drops what it cannot route).
RendezvousHost& Host() {
  static zmq::context_t context;
  static const std::unique_ptr<RendezvousHost> host = [] {
    absl::StatusOr<std::unique_ptr<RendezvousHost>> bound =
        RendezvousHost::Bind(context, "tcp://127.0.0.1:*", {}, CheckLogLine);
    FUZZ_CHECK(bound.ok(), bound.status().ToString());
    return *std::move(bound);
  }();
  return *host;
}

void Play(const std::vector<ScriptStep>& steps) {
  RendezvousHost& host = Host();
  std::array<bool, kTasks + 1> live{};  // by task id, 1..kTasks
  host.SetTaskFilter([&live](uint64_t task) { return task >= 1 && task <= kTasks && live[task]; });
  for (const ScriptStep& step : steps) {
    const uint64_t task = step.tag / 3 % kTasks + 1;
    switch (step.tag % 3) {
      case 0: {
        absl::StatusOr<WorkerMessage> message = DecodeWorkerMessage(step.payload);
        if (message.ok()) host.Handle(absl::StrCat("peer-", step.tag / 3 % 4), *message);
        break;
      }
      case 1:
        if (live[task]) host.Forget(absl::StrCat("task-", task, "/"));
        live[task] = !live[task];
        break;
      case 2: {
        if (step.payload.size() < 2) break;
        const size_t count = static_cast<uint8_t>(step.payload[0]) |
                             static_cast<size_t>(static_cast<uint8_t>(step.payload[1])) << 8;
        const std::string value = step.payload.substr(2);
        // Up to 2 x 65,535 sets, so that a burst can pass the 65,536 keys a task may hold.
        for (size_t i = 0; i < 2 * count; ++i) {
          host.Handle("peer-burst",
                      RendezvousSet{absl::StrCat("task-", task, "/burst-", i), value});
        }
        break;
      }
    }
  }
  for (uint64_t task = 1; task <= kTasks; ++task) {
    if (live[task]) host.Forget(absl::StrCat("task-", task, "/"));
  }
  host.SetTaskFilter({});
  FUZZ_CHECK(host.keys() == 0, absl::StrCat(host.keys(), " keys outlived every task"));
}

}  // namespace
}  // namespace cohort::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cohort::fuzz::Play(cohort::fuzz::ReadScript(data, size));
  return 0;
}
