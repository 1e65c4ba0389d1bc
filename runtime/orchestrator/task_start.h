// What the agents of a placed task are sent: one StartTask per agent of the placement (the
// worker's config and checkpoints, the ranks placed there, the agent's place among the task's
// agents, and for a task spanning agents the rendezvous at the orchestrator), and a warning when
// the task's GPUs are of more than one model.
//
//   StartTask common;  // ids, attempt, world size, worker
//   for (const auto& [agent_id, message] : StartTasksFor(common, endpoint, placement)) { ... }
//
// Thread-safety: pure functions.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TASK_START_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TASK_START_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/control/control_messages.h"
#include "runtime/orchestrator/placement.h"

namespace cohort {

// The key prefix of task `task_id`'s rendezvous ("task-12/"), for a task spanning agents: its
// workers set and get their keys under it.
std::string RendezvousPrefix(uint64_t task_id);

// The StartTask of each agent of `placement`, in the placement's order, with the agent's id:
// `common` (ids, attempt, world size, worker) with the ranks placed on that agent and its place
// among the task's agents; a task spanning agents meets at `rendezvous_endpoint` (a task on one
// agent meets at its agent, so the address stays empty).
std::vector<std::pair<std::string, StartTask>> StartTasksFor(const StartTask& common,
                                                             const std::string& rendezvous_endpoint,
                                                             const Placement& placement);

// "NVIDIA A100 (agent-1 slot 0); NVIDIA H100 (agent-2 slot 3)" when the GPU slots of `placement`
// are of more than one model; nullopt otherwise. `slots_of` gives an agent's slots.
std::optional<std::string> MixedGpuModels(
    const Placement& placement,
    const std::function<const std::vector<AgentSlot>&(const std::string&)>& slots_of);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TASK_START_H_
