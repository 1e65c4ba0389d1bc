// WorkerInvocation: the command line and environment of one rank's worker process, as the agent
// spawns it for a StartTask: `cohort worker` with the arguments
// harness/cohort/commands/worker_command.cc reads, and the environment the agent inherited plus the
// rank's variables.
//
//   WorkerInvocation worker = WorkerInvocationFor(start, start.ranks[0], *slot, places, environ);
//   // worker.argv[0] is the executable; worker.environment holds "KEY=VALUE" strings.
//
// A task whose StartTask names a rendezvous endpoint (its ranks span agents) also gets
// `--rendezvous ENDPOINT --rendezvous-prefix PREFIX`: the worker meets its peers there, while its
// hellos, heartbeats and reports still go to this agent's worker channel (`--endpoint`). When the
// agent reaches the orchestrator over CURVE, such a worker also gets the agent's key pair and the
// orchestrator's public key (COHORT_RENDEZVOUS_SERVER_KEY, _PUBLIC_KEY and _SECRET_KEY,
// runtime/security/rendezvous_key_variables.h) to be a CURVE client of the rendezvous host; no
// other worker gets them, not even from the inherited environment.
//
// The rank's variables: COHORT_RANK, COHORT_LOCAL_RANK, COHORT_SIZE, COHORT_TASK_ID,
// COHORT_GLOO_HOSTNAME=<the address Gloo binds and publishes> when the places name one and, on a
// GPU slot, CUDA_VISIBLE_DEVICES=<device>; then StartTask.environment (which may override any of
// them).
//
// Thread-safety: free functions without shared state.
#ifndef COHORT_RUNTIME_AGENT_WORKER_INVOCATION_H_
#define COHORT_RUNTIME_AGENT_WORKER_INVOCATION_H_

#include <optional>
#include <string>
#include <vector>

#include "runtime/control/control_messages.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

// Where a task's workers find what they need on this host.
struct TaskPlaces {
  std::string executable;       // the `cohort` binary
  std::string run_dir;          // holds config.yaml
  std::string endpoint;         // the task's worker channel (WorkerHub)
  std::string checkpoint_root;  // never empty
  std::string gloo_hostname;    // this host's address as other agents reach it; "" leaves it unset
  // The agent's CURVE keys and the orchestrator's public key, when the agent uses CURVE.
  std::optional<CurveClientConfig> agent_curve = std::nullopt;
};

struct WorkerInvocation {
  std::vector<std::string> argv;         // argv[0] is the executable
  std::vector<std::string> environment;  // "KEY=VALUE", each key once
};

// `base_environment` holds "KEY=VALUE" strings (entries without '=' are dropped).
WorkerInvocation WorkerInvocationFor(const StartTask& task, const RankAssignment& rank,
                                     const AgentSlot& slot, const TaskPlaces& places,
                                     const std::vector<std::string>& base_environment);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_WORKER_INVOCATION_H_
