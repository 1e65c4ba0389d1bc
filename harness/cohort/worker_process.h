// SuperviseWorker: runs one worker process under a libuv loop until it exits.
//
// While it runs: the worker's stdout and stderr are appended to `log_path`; the hub is drained
// every tick and each report handed to `on_message`; `on_tick` runs after each drain (progress
// redraw). SIGINT or SIGTERM to the supervisor asks the worker to stop (a StopCommand once the
// worker has said hello, SIGTERM before that); a second one kills it (SIGKILL).
//
// After the process exits, reports still in flight are collected until its TrialFinished arrives
// (or a second passes), so nothing it said is lost.
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
  ChildExit exit;
  int interrupts = 0;  // SIGINT/SIGTERM received while it ran
};

absl::StatusOr<WorkerOutcome> SuperviseWorker(
    const WorkerLaunch& launch, WorkerHub& hub,
    const std::function<void(const WorkerMessage&)>& on_message,
    const std::function<void()>& on_tick);

// This executable's path (/proc/self/exe), for spawning workers.
absl::StatusOr<std::string> SelfExecutable();

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WORKER_PROCESS_H_
