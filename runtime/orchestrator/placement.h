// Placement: where a trial's slots go on the cluster's agents, decided from a snapshot of which
// slots are busy. Pure logic over values; the orchestrator owns the real state and applies the
// decisions.
//
// Rules (Determined's):
//  - A request of k slots goes on one agent when some agent has k free slots: best fit, the agent
//    with the fewest free slots that still fits, ties broken by the lower agent id.
//  - A request larger than every agent spans agents, on whole idle agents only, all of one size s
//    with s dividing k (k / s agents). With agents of several sizes, sizes are tried largest
//    first (fewest agents); agents of different sizes are never mixed in one placement.
//  - Slots are taken lowest index first; ranks go agent by agent (ascending id), slot by slot.
//
//   std::vector<AgentView> agents = {{"agent-1", 8, {}}, {"agent-2", 8, {}}};
//   PlacementRequest request{.task_id = 12, .trial_id = 7, .slots = 16};
//   absl::Status admissible = CheckCanEverFit(request, agents);  // OK: 2 agents of 8
//   PlacementDecision decision = TryPlace(request, agents);
//   if (auto* placement = std::get_if<Placement>(&decision)) {
//     ApplyPlacement(request, *placement, &agents);  // rank 9 -> agent-2, slot 1, local rank 1
//   } else {
//     std::get<Waiting>(decision).reason;  // e.g. "needs 2 whole idle agents of 8 slots; ..."
//   }
//
// Agent ids are compared as strings. Agents with no slots are ignored. Every function here is
// pure apart from its documented output parameter; concurrent calls on distinct arguments are
// safe.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_PLACEMENT_H_
#define COHORT_RUNTIME_ORCHESTRATOR_PLACEMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace cohort {

// The task holding a busy slot. trial_id 0 means the task is not a trial (a command, a notebook).
struct SlotUser {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
};

// One agent as the scheduler sees it. Slot indices run 0..slots-1; busy keys outside that range
// are ignored. Ids are unique within a cluster.
struct AgentView {
  std::string id;
  uint32_t slots = 0;
  std::map<uint32_t, SlotUser> busy{};  // slot index -> its user
};

struct PlacementRequest {
  uint64_t task_id = 0;
  uint64_t trial_id = 0;
  uint32_t slots = 0;
};

// The slots a placement takes on one agent, ascending.
struct AgentSlots {
  std::string agent_id;
  std::vector<uint32_t> slots;
};

// Where one rank of a placed task runs.
struct RankPlacement {
  uint32_t rank = 0;
  std::string agent_id;
  uint32_t slot = 0;
  uint32_t local_rank = 0;  // rank among the task's ranks on the same agent
};

struct Placement {
  std::vector<AgentSlots> agents;  // ascending agent id, each with at least one slot

  // Rank r -> (agent, slot, local rank), ranks numbered agent by agent, slot by slot.
  std::vector<RankPlacement> Ranks() const;
};

// Why a request that could fit the cluster does not fit now, naming what blocks it, e.g.
// "needs 8 slots on one agent; agent-1 has 3 busy (trial 7), agent-2 has 8 busy (trials 4, 5)".
struct Waiting {
  std::string reason;
};

using PlacementDecision = std::variant<Placement, Waiting>;

// At submission: OK when the request fits these agents once they are idle; otherwise
// INVALID_ARGUMENT saying why in plain words, e.g. "needs 40 slots; the cluster has 16 (2 agents
// of 8)" or "needs 12 slots; agents have 8 slots each and 12 is not a multiple of 8: use 8 or 16".
// A request of 0 slots is refused.
absl::Status CheckCanEverFit(const PlacementRequest& request, absl::Span<const AgentView> agents);

// A placement for the request against the current busy state, or why it waits. A request that
// CheckCanEverFit refuses waits with that refusal as its reason (the cluster may have shrunk
// since submission).
PlacementDecision TryPlace(const PlacementRequest& request, absl::Span<const AgentView> agents);

// Marks the placement's slots busy with the request's task. Agents it names must be in *agents.
void ApplyPlacement(const PlacementRequest& request, const Placement& placement,
                    std::vector<AgentView>* agents);

// Frees every slot the task holds.
void ReleaseTask(uint64_t task_id, std::vector<AgentView>* agents);

struct QueuedDecision {
  PlacementRequest request;
  PlacementDecision decision;
};

// Places a queue in order (oldest first), applying each placement to *agents before trying the
// next request. A request that waits does not hold back the requests behind it: a later, smaller
// request takes free slots when it fits (as Determined's FIFO scheduler does), so a large request
// can wait for as long as smaller ones keep arriving. One decision per request, in queue order.
std::vector<QueuedDecision> PlaceInQueueOrder(absl::Span<const PlacementRequest> queue,
                                              std::vector<AgentView>* agents);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_PLACEMENT_H_
