// RunEmbedded: how `cohort run` trains an experiment on this machine. It is a one-machine cluster
// in one process: the orchestrator (OrchestratorServer, on the calling thread) and an agent
// (Agent, on a second thread) speak the control protocol to each other over loopback ZeroMQ, as
// `cohort orchestrator` and `cohort agent` do across machines, so every experiment runs the same
// code whether it was submitted to a cluster or run here.
//
// The agent offers `slots` (CPU slots, or the machine's GPUs) and runs the workers; the
// orchestrator runs the experiment's searcher and keeps its record in the run folder. Once the
// agent has registered, the experiment is submitted (Orchestrator::SubmitLocal); the run ends when
// the orchestrator is idle. What the user sees on stderr: each trial's progress and validations
// (from the agent's TaskProgress and metrics reports), and the orchestrator's notices (failures and
// restarts, resumptions, silent ranks, warnings). The cluster's bookkeeping goes to <run
// folder>/local/orchestrator.log and agent.log; the agent keeps each task's folder in <run
// folder>/local/tasks/<task id>/. At the end a summary goes to stdout.
//
// SIGINT or SIGTERM asks the experiment to stop: its workers checkpoint and exit, and the run
// ends STOPPED (continue it with `cohort run --resume`); a second signal kills the workers at
// once.
//
//   EmbeddedRunOptions options{.slots = CpuSlots(8), .executable = *SelfExecutable()};
//   int exit_code = RunEmbedded(std::move(submission), options);  // 0, 1 or 130
//
// Thread-safety: call from the main thread; installs SIGINT/SIGTERM handlers while it runs.
#ifndef COHORT_HARNESS_COHORT_RUN_EMBEDDED_RUN_H_
#define COHORT_HARNESS_COHORT_RUN_EMBEDDED_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/control/control_messages.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/server_security.h"
#include "runtime/security/curve_client_config.h"

namespace cohort {

struct EmbeddedRunOptions {
  std::vector<AgentSlot> slots;  // what the agent offers: CpuSlots(n), or DetectGpuSlots()
  std::string executable;        // the `cohort` binary the workers run

  // Under `cohort launch` (launched_rank.h) rank 0's process is this run, joined by the agents of
  // the other ranks: the orchestrator listens for them at `agent_endpoint` (default loopback, a
  // free port), its workers meet theirs at `rendezvous_endpoint` ("": none, one agent), and the
  // experiment is submitted once the agents of `rank_agent_ids` (this one, `agent_id`, among them)
  // have registered, or the run fails after `registration_seconds`. A rank's agent lost later (its
  // process ended, its host went away) has as long to join again, else the run fails naming it.
  std::string agent_endpoint = "tcp://127.0.0.1:*";
  std::string rendezvous_endpoint;
  std::string agent_id = "local";
  std::string advertise_address = "127.0.0.1";  // AgentOptions::advertise_address
  std::vector<std::string> rank_agent_ids;  // every rank's agent, by rank; empty: only this one
  double registration_seconds = 30;
  // Said after an error binding `agent_endpoint` (where its port comes from); "": nothing.
  std::string agent_endpoint_hint;
  // How the user continues a stopped run, after "continue with: " (the run folder follows).
  std::string continue_command = "cohort run --resume";
  // CURVE for an agent endpoint off loopback: the orchestrator's keys and the agents it admits,
  // and this process's agent's own keys.
  ServerSecurityOptions security;
  std::optional<CurveClientConfig> agent_curve;
};

// Trains `submission` to its end. Exit status: 0 when the experiment completed, 130 when a signal
// stopped it, 1 otherwise (an error, or a submission the orchestrator refused: its message on
// stderr).
int RunEmbedded(LocalSubmission submission, const EmbeddedRunOptions& options);

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_RUN_EMBEDDED_RUN_H_
