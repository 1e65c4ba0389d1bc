#include "runtime/agent/task_table.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

// Everything a StartTask must say of itself, whatever the agent holds.
absl::Status CheckShape(const StartTask& task) {
  const std::string what = absl::StrCat("task ", task.task_id, ": ");
  if (task.task_id == 0) return absl::InvalidArgumentError("task 0: task ids start at 1");
  for (const KeyValue& variable : task.environment) {
    if (variable.key.empty() || variable.key.find('=') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(what, "environment variable name '",
                                                     variable.key, "' is empty or holds '='"));
    }
  }
  if (task.worker.plugin_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, "worker.plugin_path is empty"));
  }
  if (task.worker.config_path.empty() == task.worker.config_yaml.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "exactly one of worker.config_path and worker.config_yaml is needed"));
  }
  if (task.ranks.empty()) return absl::InvalidArgumentError(absl::StrCat(what, "no ranks"));
  std::set<uint32_t> ranks, local_ranks, slots;
  for (const RankAssignment& r : task.ranks) {
    if (r.rank >= task.world_size) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "rank ", r.rank, " is not below the world size ", task.world_size));
    }
    if (r.local_rank >= task.ranks.size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, "local rank ", r.local_rank,
                                                     " is not below the ", task.ranks.size(),
                                                     " ranks on this agent"));
    }
    if (!ranks.insert(r.rank).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, "rank ", r.rank, " is listed twice"));
    }
    if (!local_ranks.insert(r.local_rank).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "local rank ", r.local_rank, " is listed twice"));
    }
    if (!slots.insert(r.slot_index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "slot ", r.slot_index, " is given to two ranks"));
    }
  }
  const bool spans_agents = task.world_size > task.ranks.size() || task.cross_size > 1;
  if (!spans_agents) {
    if (task.cross_rank != 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, "cross rank ", task.cross_rank,
                                                     " of a task on this agent alone (cross_size ",
                                                     task.cross_size, ")"));
    }
    return absl::OkStatus();
  }
  if (task.cross_size <= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "the world size ", task.world_size, " exceeds the ", task.ranks.size(),
                     " ranks on this agent, but cross_size ", task.cross_size,
                     " says no other agent runs the rest"));
  }
  if (task.rendezvous.endpoint.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "a task spanning ", task.cross_size,
                     " agents needs a rendezvous endpoint where its ranks meet"));
  }
  if (task.cross_rank >= task.cross_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "cross rank ", task.cross_rank, " is not below the cross size ", task.cross_size));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<AgentSlot> CpuSlots(uint32_t count) {
  std::vector<AgentSlot> slots;
  for (uint32_t i = 0; i < count; ++i) slots.push_back(AgentSlot{i, SlotKind::kCpu, -1, "cpu"});
  return slots;
}

absl::Status TaskTable::Admit(const StartTask& task) {
  if (const TaskEntry* held = Find(task.task_id)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "task ", task.task_id, " is already on this agent (", TaskStateName(held->state), ")"));
  }
  if (absl::Status shape = CheckShape(task); !shape.ok()) return shape;
  TaskEntry entry{task.task_id, task.trial_id, task.experiment_id, TaskState::kPending, {}, {}};
  for (const RankAssignment& r : task.ranks) {
    if (Slot(r.slot_index) == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("task ", task.task_id, ": slot ", r.slot_index,
                       " does not exist (this agent has ", slots_.size(), " slots)"));
    }
    if (const TaskEntry* holder = Holder(r.slot_index)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "task ", task.task_id, ": slot ", r.slot_index, " is busy with task ", holder->task_id));
    }
    entry.slots.push_back(r.slot_index);
    entry.ranks.push_back(r.rank);
  }
  tasks_.emplace(task.task_id, std::move(entry));
  return absl::OkStatus();
}

absl::Status TaskTable::SetState(uint64_t task_id, TaskState state) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", task_id, " is not on this agent"));
  }
  it->second.state = state;
  return absl::OkStatus();
}

const TaskEntry* TaskTable::Find(uint64_t task_id) const {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

const AgentSlot* TaskTable::Slot(uint32_t index) const {
  for (const AgentSlot& slot : slots_) {
    if (slot.index == index) return &slot;
  }
  return nullptr;
}

const TaskEntry* TaskTable::Holder(uint32_t index) const {
  for (const auto& [id, task] : tasks_) {
    if (task.state == TaskState::kExited) continue;
    for (const uint32_t slot : task.slots) {
      if (slot == index) return &task;
    }
  }
  return nullptr;
}

std::vector<TaskEntry> TaskTable::Entries() const {
  std::vector<TaskEntry> entries;
  for (const auto& [id, task] : tasks_) entries.push_back(task);
  return entries;
}

uint32_t TaskTable::BusySlots() const {
  uint32_t busy = 0;
  for (const auto& [id, task] : tasks_) {
    if (task.state != TaskState::kExited) busy += static_cast<uint32_t>(task.slots.size());
  }
  return busy;
}

std::vector<uint64_t> TaskTable::LiveTaskIds() const {
  std::vector<uint64_t> ids;
  for (const auto& [id, task] : tasks_) {
    if (task.state != TaskState::kExited) ids.push_back(id);
  }
  return ids;
}

ErrorReply ErrorReplyFor(const absl::Status& status) {
  ControlErrorCode code = ControlErrorCode::kUnspecified;
  switch (status.code()) {
    case absl::StatusCode::kAlreadyExists:
      code = ControlErrorCode::kDuplicateTask;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = ControlErrorCode::kSlotUnavailable;
      break;
    case absl::StatusCode::kNotFound:
      code = ControlErrorCode::kUnknownTask;
      break;
    case absl::StatusCode::kInvalidArgument:
      code = ControlErrorCode::kInvalidRequest;
      break;
    default:
      break;
  }
  return ErrorReply{code, std::string(status.message())};
}

}  // namespace cohort
