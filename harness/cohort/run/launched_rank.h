// RunLaunchedRank: a rank other than 0 of a trial that a cluster's launcher started (`cohort
// launch`, launch_command.h). It is an agent of one slot for the job's length: it joins rank 0's
// orchestrator, runs the worker of each task placed on it, and ends when its work is done: once a
// task has ended, no other runs, and rank 0 no longer accepts connections at its port (rank 0
// ends with its experiment; while it serves, a grid's next trial may still come), or when no task
// came within join_seconds (rank 0 unreachable, or it failed before placing the trial). The
// agent's log goes to <work_dir>/agent.log. A rank that ends well removes work_dir; one that
// fails keeps it, for its logs.
//
// SIGINT or SIGTERM (the launcher stopping the job) stops the task: the worker checkpoints and
// exits (a second signal kills it at once).
//
//   int exit_code = RunLaunchedRank(options);  // 0, 1 or 130
//
// Thread-safety: call from the main thread; installs SIGINT/SIGTERM handlers while it runs.
#ifndef COHORT_HARNESS_COHORT_RUN_LAUNCHED_RANK_H_
#define COHORT_HARNESS_COHORT_RUN_LAUNCHED_RANK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "runtime/control/control_messages.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

struct LaunchedRankOptions {
  std::string rank_zero_host;     // MASTER_ADDR
  uint16_t rank_zero_port = 0;    // where rank 0's orchestrator listens for the ranks' agents
  std::string agent_id;           // LaunchedAgentId(rank, world size)
  AgentSlot slot;                 // the one slot: a CPU, or the GPU of the rank's local rank
  std::string advertise_address;  // this machine's address as the other ranks reach it
  std::string work_dir;           // the task folders and agent.log
  std::string executable;         // the `cohort` binary the workers run
  std::optional<CurveClientConfig> curve;  // when rank 0's endpoint needs CURVE
  double join_seconds = 300;
  // Asked of each task rank 0 places here (AgentOptions::check_task): an error refuses it, and
  // the rank then ends with that error.
  std::function<absl::Status(const StartTask& task)> check_task;
  double probe_interval_seconds = 0.25;  // how often an idle rank asks whether rank 0 serves
};

// Exit status: 0 when every task this rank ran exited 0, 130 when a signal stopped it, 1 otherwise
// (a task that failed, or none placed in time: the reason on stderr).
int RunLaunchedRank(const LaunchedRankOptions& options);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_LAUNCHED_RANK_H_
