// SuperviseWorkers: runs a trial's worker processes (one per slot) under one libuv loop until
// they have all exited.
//
// While they run: each worker's stdout and stderr are appended to its launch's `log_path` (lines
// prefixed "[rank R] " when there are several workers); the hub is drained every tick and each
// message handed to `on_message` with the peer it came from; `on_tick` runs after each drain
// (progress redraw). SIGINT or SIGTERM to the supervisor asks every worker to stop (a StopCommand
// once the worker said hello, SIGTERM before that); a second one kills them (SIGKILL). When one
// worker dies or fails, the others are killed: in lockstep they could only wait for it.
//
// After the processes exit, messages still in flight are collected until every worker's
// TrialFinished arrived (or a second passes), so nothing a worker said is lost.
//
// Thread-safety: call from one thread; installs SIGINT/SIGTERM handlers for its duration.
#ifndef COHORT_HARNESS_COHORT_WORKER_PROCESS_H_
#define COHORT_HARNESS_COHORT_WORKER_PROCESS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/cohort/child_process.h"
#include "runtime/control/worker_hub.h"
#include "runtime/control/worker_messages.h"

namespace cohort {

struct WorkerLaunch {
  std::string executable;
  std::vector<std::string> args;  // without argv[0]
  std::string log_path;
};

struct WorkerOutcome {
  std::vector<ChildExit> exits;  // per worker, in launch order
  int interrupts = 0;            // SIGINT/SIGTERM received while they ran
};

using WorkerMessageHandler =
    std::function<void(const std::string& peer, const WorkerMessage& message)>;

absl::StatusOr<WorkerOutcome> SuperviseWorkers(const std::vector<WorkerLaunch>& launches,
                                               WorkerHub& hub,
                                               const WorkerMessageHandler& on_message,
                                               const std::function<void()>& on_tick);

// This executable's path (/proc/self/exe), for spawning workers.
absl::StatusOr<std::string> SelfExecutable();

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WORKER_PROCESS_H_
