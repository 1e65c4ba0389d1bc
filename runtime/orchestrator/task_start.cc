#include "runtime/orchestrator/task_start.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {

std::string RendezvousPrefix(uint64_t task_id) { return absl::StrCat("task-", task_id, "/"); }

std::vector<std::pair<std::string, StartTask>> StartTasksFor(const StartTask& common,
                                                             const std::string& rendezvous_endpoint,
                                                             const Placement& placement) {
  std::vector<std::pair<std::string, StartTask>> messages;
  const std::vector<RankPlacement> ranks = placement.Ranks();
  for (size_t index = 0; index < placement.agents.size(); ++index) {
    const std::string& agent_id = placement.agents[index].agent_id;
    StartTask message = common;
    for (const RankPlacement& rank : ranks) {
      if (rank.agent_id != agent_id) continue;
      message.ranks.push_back(RankAssignment{rank.rank, rank.local_rank, rank.slot});
    }
    message.cross_rank = static_cast<uint32_t>(index);
    message.cross_size = static_cast<uint32_t>(placement.agents.size());
    if (placement.agents.size() > 1) {
      message.rendezvous.endpoint = rendezvous_endpoint;
      message.rendezvous.prefix = RendezvousPrefix(common.task_id);
    }
    messages.emplace_back(agent_id, std::move(message));
  }
  return messages;
}

std::optional<std::string> MixedGpuModels(
    const Placement& placement,
    const std::function<const std::vector<AgentSlot>&(const std::string&)>& slots_of) {
  std::map<std::string, std::vector<std::string>> slots_by_model;
  for (const AgentSlots& part : placement.agents) {
    for (const uint32_t index : part.slots) {
      for (const AgentSlot& slot : slots_of(part.agent_id)) {
        if (slot.index != index || slot.kind != SlotKind::kGpu) continue;
        slots_by_model[slot.name].push_back(absl::StrCat(part.agent_id, " slot ", index));
      }
    }
  }
  if (slots_by_model.size() < 2) return std::nullopt;
  return absl::StrJoin(slots_by_model, "; ", [](std::string* out, const auto& model) {
    absl::StrAppend(out, model.first, " (", absl::StrJoin(model.second, ", "), ")");
  });
}

}  // namespace cohort
