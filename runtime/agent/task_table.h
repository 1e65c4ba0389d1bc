// TaskTable: the agent's slots and the tasks that hold them, as the orchestrator sees them in
// AgentHello, AgentHeartbeat and TaskList.
//
// Admit checks a StartTask against the slots and the tasks already held and, if it is acceptable,
// records the task as pending with its slots reserved. A task keeps its slots until it is
// exited; an exited task stays listed (its TaskExits may not be acknowledged yet) until Remove.
//
//   TaskTable table(CpuSlots(4));
//   if (absl::Status admitted = table.Admit(start); !admitted.ok()) {
//     Reply(ErrorReplyFor(admitted));   // SlotUnavailable, DuplicateTask, InvalidRequest
//   }
//   table.SetState(start.task_id, TaskState::kRunning);
//
// Thread-safety: not thread-safe.
#ifndef COHORT_RUNTIME_AGENT_TASK_TABLE_H_
#define COHORT_RUNTIME_AGENT_TASK_TABLE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "runtime/control/control_messages.h"

namespace cohort {

// `count` CPU slots, indices 0..count-1.
std::vector<AgentSlot> CpuSlots(uint32_t count);

class TaskTable {
 public:
  explicit TaskTable(std::vector<AgentSlot> slots) : slots_(std::move(slots)) {}

  // Records `task` as pending with its slots reserved, or refuses it, touching nothing:
  //   ALREADY_EXISTS      the task id is held already;
  //   INVALID_ARGUMENT    no ranks, a rank or local rank out of range or repeated, a slot named
  //                       twice, no plugin, not exactly one of config_path and config_yaml, or
  //                       ranks on other agents (world_size above the ranks listed, or
  //                       cross_size > 1) without both cross_size > 1 and a rendezvous
  //                       endpoint, or with cross_rank not below cross_size;
  //   RESOURCE_EXHAUSTED  a slot that does not exist or is held by a task not yet exited.
  // The message says which for people.
  absl::Status Admit(const StartTask& task);

  // NOT_FOUND for a task not held. Exited releases the task's slots.
  absl::Status SetState(uint64_t task_id, TaskState state);

  // Forgets the task (its exits were acknowledged); unknown ids are ignored.
  void Remove(uint64_t task_id) { tasks_.erase(task_id); }

  // The task, or nullptr.
  const TaskEntry* Find(uint64_t task_id) const;

  const std::vector<AgentSlot>& slots() const { return slots_; }
  // The slot with `index`, or nullptr.
  const AgentSlot* Slot(uint32_t index) const;
  // Every task held, by id.
  std::vector<TaskEntry> Entries() const;
  // Slots held by tasks not yet exited.
  uint32_t BusySlots() const;
  // Tasks not yet exited, by id.
  std::vector<uint64_t> LiveTaskIds() const;

 private:
  // The live task holding slot `index`, or nullptr.
  const TaskEntry* Holder(uint32_t index) const;

  std::vector<AgentSlot> slots_;
  std::map<uint64_t, TaskEntry> tasks_;
};

// The ErrorReply that refuses a request for `status` (not OK): ALREADY_EXISTS -> DuplicateTask,
// RESOURCE_EXHAUSTED -> SlotUnavailable, NOT_FOUND -> UnknownTask, INVALID_ARGUMENT ->
// InvalidRequest, anything else Unspecified; the message is the status's.
ErrorReply ErrorReplyFor(const absl::Status& status);

}  // namespace cohort

#endif  // COHORT_RUNTIME_AGENT_TASK_TABLE_H_
