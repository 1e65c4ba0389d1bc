#include "runtime/orchestrator/placement.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace cohort {
namespace {

// Longer lists of busy agents end in "and N more".
constexpr size_t kMaxAgentsNamed = 8;

// Agent count per slot count, largest first.
using AgentsBySize = std::map<uint32_t, uint32_t, std::greater<>>;

uint32_t BusyCount(const AgentView& agent) {
  return static_cast<uint32_t>(
      std::distance(agent.busy.begin(), agent.busy.lower_bound(agent.slots)));
}

uint32_t FreeCount(const AgentView& agent) { return agent.slots - BusyCount(agent); }

std::string Counted(uint64_t count, absl::string_view one, absl::string_view many) {
  return absl::StrCat(count, " ", count == 1 ? one : many);
}

std::string Slots(uint64_t count) { return Counted(count, "slot", "slots"); }

// The agents that have slots, ascending id.
std::vector<const AgentView*> UsableAgents(absl::Span<const AgentView> agents) {
  std::vector<const AgentView*> usable;
  for (const AgentView& agent : agents) {
    if (agent.slots > 0) usable.push_back(&agent);
  }
  std::sort(usable.begin(), usable.end(),
            [](const AgentView* a, const AgentView* b) { return a->id < b->id; });
  return usable;
}

AgentsBySize CountBySize(const std::vector<const AgentView*>& agents) {
  AgentsBySize sizes;
  for (const AgentView* agent : agents) ++sizes[agent->slots];
  return sizes;
}

// "2 agents of 8, 1 agent of 4".
std::string DescribeSizes(const AgentsBySize& sizes) {
  std::vector<std::string> groups;
  for (const auto& [size, count] : sizes) {
    groups.push_back(absl::StrCat(Counted(count, "agent", "agents"), " of ", size));
  }
  return absl::StrJoin(groups, ", ");
}

// The sizes (largest first) whose agents can together hold k slots, k being larger than any agent.
std::vector<uint32_t> SpanningSizes(uint32_t k, const AgentsBySize& sizes) {
  std::vector<uint32_t> usable;
  for (const auto& [size, count] : sizes) {
    if (k % size == 0 && k / size <= count) usable.push_back(size);
  }
  return usable;
}

// "use 8 or 16": the nearest slot counts below and above k that these agents can hold.
std::string NearestThatFit(uint32_t k, const AgentsBySize& sizes) {
  std::set<uint64_t> fitting = {sizes.begin()->first};
  for (const auto& [size, count] : sizes) {
    for (uint64_t agents = 2; agents <= count; ++agents) fitting.insert(agents * size);
  }
  const auto above = fitting.upper_bound(k);
  const uint64_t below = *std::prev(fitting.lower_bound(k));
  if (above == fitting.end()) return absl::StrCat("use ", below);
  return absl::StrCat("use ", below, " or ", *above);
}

// Why no size of agent can hold k slots although the cluster has at least k.
std::string NoSpanningSize(uint32_t k, const AgentsBySize& sizes) {
  const std::string suggestion = NearestThatFit(k, sizes);
  if (sizes.size() == 1) {
    const uint32_t size = sizes.begin()->first;
    return absl::StrCat("needs ", Slots(k), "; agents have ", size, " slots each and ", k,
                        " is not a multiple of ", size, ": ", suggestion);
  }
  std::vector<std::string> obstacles;
  for (const auto& [size, count] : sizes) {
    if (k % size != 0) {
      obstacles.push_back(absl::StrCat(k, " is not a multiple of ", size));
    } else {
      obstacles.push_back(absl::StrCat("it would take ", k / size, " agents of ", size,
                                       " but the cluster has ", count));
    }
  }
  return absl::StrCat("needs ", Slots(k),
                      ", more than any agent has, so it must span whole agents of one size: ",
                      absl::StrJoin(obstacles, "; "), ": ", suggestion);
}

// "trials 4, 5, task 9": who holds the agent's busy slots.
std::string DescribeUsers(const AgentView& agent) {
  std::set<uint64_t> trials;
  std::set<uint64_t> tasks;
  for (auto it = agent.busy.begin(); it != agent.busy.lower_bound(agent.slots); ++it) {
    if (it->second.trial_id != 0) {
      trials.insert(it->second.trial_id);
    } else {
      tasks.insert(it->second.task_id);
    }
  }
  std::vector<std::string> users;
  if (!trials.empty()) {
    users.push_back(
        absl::StrCat(trials.size() == 1 ? "trial " : "trials ", absl::StrJoin(trials, ", ")));
  }
  if (!tasks.empty()) {
    users.push_back(
        absl::StrCat(tasks.size() == 1 ? "task " : "tasks ", absl::StrJoin(tasks, ", ")));
  }
  return absl::StrJoin(users, ", ");
}

// "agent-1 has 3 busy (trial 7), agent-2 has 8 busy (trials 4, 5)".
std::string DescribeBusy(const std::vector<const AgentView*>& agents) {
  std::vector<std::string> described;
  for (size_t i = 0; i < agents.size() && i < kMaxAgentsNamed; ++i) {
    described.push_back(absl::StrCat(agents[i]->id, " has ", BusyCount(*agents[i]), " busy (",
                                     DescribeUsers(*agents[i]), ")"));
  }
  if (agents.size() > kMaxAgentsNamed) {
    described.push_back(absl::StrCat("and ", agents.size() - kMaxAgentsNamed, " more"));
  }
  return absl::StrJoin(described, ", ");
}

// Best fit on one agent: the fewest free slots that still hold k, ties to the lower id.
PlacementDecision PlaceOnOneAgent(uint32_t k, const std::vector<const AgentView*>& agents) {
  const AgentView* best = nullptr;
  for (const AgentView* agent : agents) {
    const uint32_t free = FreeCount(*agent);
    if (free >= k && (best == nullptr || free < FreeCount(*best))) best = agent;
  }
  if (best == nullptr) {
    std::vector<const AgentView*> large_enough;
    for (const AgentView* agent : agents) {
      if (agent->slots >= k) large_enough.push_back(agent);
    }
    return Waiting{absl::StrCat("needs ", Slots(k), " on one agent; ", DescribeBusy(large_enough))};
  }
  AgentSlots taken{best->id, {}};
  for (uint32_t slot = 0; taken.slots.size() < k; ++slot) {
    if (!best->busy.contains(slot)) taken.slots.push_back(slot);
  }
  return Placement{{std::move(taken)}};
}

// Whole idle agents of the first size (largest first) that has k / size of them.
PlacementDecision PlaceOnWholeAgents(uint32_t k, const std::vector<const AgentView*>& agents,
                                     const std::vector<uint32_t>& sizes) {
  std::vector<std::string> shortfalls;
  for (uint32_t size : sizes) {
    const uint32_t needed = k / size;
    std::vector<const AgentView*> idle;
    std::vector<const AgentView*> busy;
    for (const AgentView* agent : agents) {
      if (agent->slots == size) (BusyCount(*agent) == 0 ? idle : busy).push_back(agent);
    }
    if (idle.size() >= needed) {
      Placement placement;
      for (uint32_t i = 0; i < needed; ++i) {
        AgentSlots& taken = placement.agents.emplace_back(AgentSlots{idle[i]->id, {}});
        for (uint32_t slot = 0; slot < size; ++slot) taken.slots.push_back(slot);
      }
      return placement;
    }
    shortfalls.push_back(absl::StrCat(needed, " whole idle agents of ", size, " slots; ",
                                      idle.size(), idle.size() == 1 ? " is" : " are", " idle; ",
                                      DescribeBusy(busy)));
  }
  return Waiting{absl::StrCat("needs ", absl::StrJoin(shortfalls, "; or "))};
}

}  // namespace

std::vector<RankPlacement> Placement::Ranks() const {
  std::vector<RankPlacement> ranks;
  for (const AgentSlots& agent : agents) {
    uint32_t local_rank = 0;
    for (uint32_t slot : agent.slots) {
      ranks.push_back(
          RankPlacement{static_cast<uint32_t>(ranks.size()), agent.agent_id, slot, local_rank++});
    }
  }
  return ranks;
}

absl::Status CheckCanEverFit(const PlacementRequest& request, absl::Span<const AgentView> agents) {
  const uint32_t k = request.slots;
  if (k == 0) return absl::InvalidArgumentError("needs 0 slots; a task needs at least 1");
  const AgentsBySize sizes = CountBySize(UsableAgents(agents));
  if (sizes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("needs ", Slots(k), "; the cluster has no agents with slots"));
  }
  if (k <= sizes.begin()->first) return absl::OkStatus();
  uint64_t total = 0;
  for (const auto& [size, count] : sizes) total += uint64_t{size} * count;
  if (k > total) {
    return absl::InvalidArgumentError(absl::StrCat("needs ", Slots(k), "; the cluster has ", total,
                                                   " (", DescribeSizes(sizes), ")"));
  }
  if (SpanningSizes(k, sizes).empty()) {
    return absl::InvalidArgumentError(NoSpanningSize(k, sizes));
  }
  return absl::OkStatus();
}

PlacementDecision TryPlace(const PlacementRequest& request, absl::Span<const AgentView> agents) {
  if (absl::Status fits = CheckCanEverFit(request, agents); !fits.ok()) {
    return Waiting{std::string(fits.message())};
  }
  const std::vector<const AgentView*> usable = UsableAgents(agents);
  const AgentsBySize sizes = CountBySize(usable);
  if (request.slots <= sizes.begin()->first) return PlaceOnOneAgent(request.slots, usable);
  return PlaceOnWholeAgents(request.slots, usable, SpanningSizes(request.slots, sizes));
}

void ApplyPlacement(const PlacementRequest& request, const Placement& placement,
                    std::vector<AgentView>* agents) {
  for (const AgentSlots& taken : placement.agents) {
    auto agent = std::find_if(agents->begin(), agents->end(),
                              [&](const AgentView& a) { return a.id == taken.agent_id; });
    if (agent == agents->end()) continue;
    for (uint32_t slot : taken.slots) {
      agent->busy[slot] = SlotUser{request.task_id, request.trial_id};
    }
  }
}

void ReleaseTask(uint64_t task_id, std::vector<AgentView>* agents) {
  for (AgentView& agent : *agents) {
    std::erase_if(agent.busy, [&](const auto& entry) { return entry.second.task_id == task_id; });
  }
}

std::vector<QueuedDecision> PlaceInQueueOrder(absl::Span<const PlacementRequest> queue,
                                              std::vector<AgentView>* agents) {
  std::vector<QueuedDecision> decisions;
  for (const PlacementRequest& request : queue) {
    PlacementDecision decision = TryPlace(request, *agents);
    if (const auto* placement = std::get_if<Placement>(&decision)) {
      ApplyPlacement(request, *placement, agents);
    }
    decisions.push_back(QueuedDecision{request, std::move(decision)});
  }
  return decisions;
}

}  // namespace cohort
