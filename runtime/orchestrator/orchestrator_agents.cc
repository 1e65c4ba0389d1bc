// The Orchestrator's side of the control channel: agents' messages (docs/protocol.md).
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/orchestrator/cluster_queries.h"
#include "runtime/orchestrator/orchestrator.h"
#include "runtime/orchestrator/orchestrator_state.h"

namespace cohort {
namespace {

std::string DescribeExit(const TaskExit& exit) {
  std::string who = exit.rank == kWholeTask ? "the task" : absl::StrCat("rank ", exit.rank);
  return absl::StrCat(who, " ", HowItEnded(exit));
}

// The workers' warning and error lines told of a trial's attempt, at most (its log keeps them all).
constexpr uint32_t kToldLogLines = 20;

// How long the ranks of a task on other agents get to stop after one rank failed.
constexpr uint32_t kFailedPeerGraceSeconds = 5;

// ", and rank 1 with it": the ranks of the task's part on `agent_id` that had not exited.
std::string RanksLostWith(const orchestration::Task& task, const std::string& agent_id) {
  std::vector<int32_t> ranks;
  if (auto part = task.parts.find(agent_id); part != task.parts.end()) {
    for (const int32_t rank : part->second.ranks) {
      if (rank != kWholeTask && part->second.exits.count(rank) == 0) ranks.push_back(rank);
    }
  }
  if (ranks.empty()) return "";
  return absl::StrCat(", and ", ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(ranks, ", "),
                      " with it");
}

// Names `why` (how a rank or an agent's part ended, blamed `blame`) in the task's failure: as the
// failure where there is none yet, or before one a rank's exit set that is less to blame (a
// peer's closed connection reported first); any other failure stays first.
void Blame(orchestration::Task& task, std::string why, FailureBlame blame) {
  if (task.flags.failure.empty()) {
    task.flags.failure = std::move(why);
    task.failure_blame = blame;
  } else if (task.failure_blame != FailureBlame::kNone && blame > task.failure_blame) {
    task.flags.failure = absl::StrCat(why, "; then ", task.flags.failure);
    task.failure_blame = blame;
  }
}

// Makes `lost`, the loss of the task's part on an agent, the task's failure. That part's ranks
// ended unseen, so a rank's error reported meanwhile from elsewhere is a consequence and comes
// after it.
void BlameLostAgent(orchestration::Task& task, std::string lost) {
  task.flags.agent_lost = true;
  Blame(task, std::move(lost), FailureBlame::kOutside);
}

}  // namespace

// ---------------------------------------------------------------- agents

void Orchestrator::OnAgentMessage(const std::string& agent_id, const DecodedControl& message) {
  const uint64_t message_id = message.header.message_id;
  if (message.header.sender != agent_id) {
    outbox_.Send(agent_id,
                 ErrorReply{ControlErrorCode::kInvalidRequest,
                            absl::StrCat("the envelope's sender '", message.header.sender,
                                         "' is not the connection's identity '", agent_id, "'")},
                 message_id);
    Notice(absl::StrCat("dropped a message from '", agent_id, "' sent as '", message.header.sender,
                        "'"));
    return;
  }
  if (const auto* hello = std::get_if<AgentHello>(&message.message)) {
    OnHello(agent_id, message_id, *hello);
    PlaceQueuedTasks();
    return;
  }
  auto found = cluster_->agents.find(agent_id);
  if (found == cluster_->agents.end() || !found->second->connected) {
    // Answers are not requests: an unknown agent's Ack needs no answer either. Nor does the last
    // word of an agent whose job has ended with its task (it is being cancelled): it is not asked
    // to register again.
    if (!std::holds_alternative<Ack>(message.message) &&
        !std::holds_alternative<ErrorReply>(message.message) &&
        CheckProvisionedAgent(agent_id).ok()) {
      outbox_.Send(
          agent_id,
          ErrorReply{ControlErrorCode::kNotRegistered,
                     absl::StrCat("agent '", agent_id, "' is not registered: send AgentHello")},
          message_id);
    }
    return;
  }
  Agent& agent = *found->second;
  agent.last_seen = clock_.MonotonicSeconds();
  agent.last_seen_unix = clock_.UnixSeconds();
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, TaskStatus>) {
          OnTaskStatus(agent_id, m);
        } else if constexpr (std::is_same_v<T, TaskExit>) {
          OnTaskExit(agent_id, message_id, m);
        } else if constexpr (std::is_same_v<T, TaskMetricsReport>) {
          OnMetrics(m);
          AcknowledgeReport(agent_id, message);
        } else if constexpr (std::is_same_v<T, TaskCheckpointReport>) {
          OnCheckpoint(m);
          AcknowledgeReport(agent_id, message);
        } else if constexpr (std::is_same_v<T, LogBatch>) {
          OnLogBatch(m);
        } else if constexpr (std::is_same_v<T, TaskProgress>) {
          OnProgress(m);
        } else if constexpr (std::is_same_v<T, Ack>) {
          OnAnswer(agent_id, message.header.correlation_id, nullptr);
        } else if constexpr (std::is_same_v<T, ErrorReply>) {
          OnAnswer(agent_id, message.header.correlation_id, &m);
        } else if constexpr (std::is_same_v<T, AgentHeartbeat>) {
          OnHeartbeat(agent_id, m);
        } else if constexpr (std::is_same_v<T, TaskList>) {
          // Task lists are asked for by nobody yet.
        } else {
          outbox_.Send(agent_id,
                       ErrorReply{ControlErrorCode::kInvalidRequest,
                                  absl::StrCat(ControlMessageName(ControlMessage(m)),
                                               " is not a message an agent sends")},
                       message_id);
        }
      },
      message.message);
  PlaceQueuedTasks();
}

void Orchestrator::OnHello(const std::string& agent_id, uint64_t message_id,
                           const AgentHello& hello) {
  // A job's agent may be quicker than the answer that names its job: take the answers first.
  if (options_.provisioner != nullptr) ProvisionQueuedTasks();
  if (absl::Status wanted = CheckProvisionedAgent(agent_id); !wanted.ok()) {
    outbox_.Send(agent_id,
                 ErrorReply{ControlErrorCode::kInvalidRequest, std::string(wanted.message())},
                 message_id);
    return;
  }
  if (options_.admit_agent) {
    if (absl::Status admitted = options_.admit_agent(agent_id); !admitted.ok()) {
      const std::string why(admitted.message());
      outbox_.Send(agent_id, ErrorReply{ControlErrorCode::kInvalidRequest, why}, message_id);
      if (refusals_told_.insert(agent_id).second) {
        Notice(absl::StrCat(
            "refused agent ", agent_id,
            hello.hostname.empty() ? "" : absl::StrCat(" (on ", hello.hostname, ")"), ": ", why));
      }
      return;
    }
  }
  std::unique_ptr<Agent>& slot = cluster_->agents[agent_id];
  const bool known = slot != nullptr;
  if (!known) slot = std::make_unique<Agent>();
  Agent& agent = *slot;
  agent.id = agent_id;
  agent.hostname = hello.hostname;
  agent.slots = hello.slots;
  agent.connected = true;
  agent.draining = false;
  agent.slot_refusals = 0;
  agent.held_until = 0;
  agent.last_seen = clock_.MonotonicSeconds();
  agent.last_seen_unix = clock_.UnixSeconds();
  outbox_.Send(agent_id, Ack{}, message_id);
  Event(absl::StrCat("agent ", agent_id, known ? " registered again" : " registered", " (",
                     hello.slots.size(), " slot", hello.slots.size() == 1 ? "" : "s",
                     hello.hostname.empty() ? "" : absl::StrCat(" on ", hello.hostname), ")"));

  // Tasks the agent holds that the orchestrator does not know of (from before a restart of
  // either) are stopped; parts the orchestrator placed there that the agent no longer holds are
  // lost.
  std::set<uint64_t> held;
  for (const TaskEntry& entry : hello.tasks) {
    held.insert(entry.task_id);
    Task* task = FindTask(entry.task_id);
    if (entry.state == TaskState::kExited) continue;  // its TaskExits follow
    if (task == nullptr || task->parts.count(agent_id) == 0) {
      // One this orchestrator placed and has ended since (its agent was taken for lost, silent for
      // the agent timeout, or its StartTask went unanswered) that the agent still holds.
      const bool ended_here = entry.task_id >= first_task_id_;
      outbox_.Send(
          agent_id,
          KillTask{entry.task_id,
                   ended_here ? "ended by the orchestrator meanwhile (this agent taken for "
                                "lost, or the task's start unanswered)"
                              : "unknown to the orchestrator",
                   0},
          0);
      // It ends in its trial's log too (once, however often the agent registers before its exits
      // come), where its worker lines stop.
      auto trial = cluster_->trials.find(entry.trial_id);
      if (task == nullptr && trial != cluster_->trials.end() &&
          agent.leftover_ranks.count(entry.task_id) == 0) {
        NoteInTrialLog(
            *trial->second, 0,
            ended_here
                ? absl::StrCat("task ", entry.task_id, " on ", agent_id,
                               ", which this orchestrator ended meanwhile (its agent taken for "
                               "lost, or its start unanswered), is stopped: the agent still held "
                               "it")
                : absl::StrCat("task ", entry.task_id, " on ", agent_id,
                               ", placed before this orchestrator started, is stopped: unknown to "
                               "this orchestrator, which places the trial itself"));
      }
      std::set<int32_t>& ranks = agent.leftover_ranks[entry.task_id];
      for (const uint32_t rank : entry.ranks) ranks.insert(static_cast<int32_t>(rank));
      for (const uint32_t slot : entry.slots) agent.busy[slot] = SlotUser{entry.task_id, 0};
    }
  }
  std::vector<uint64_t> lost;
  for (const auto& [task_id, task] : cluster_->tasks) {
    auto part = task->parts.find(agent_id);
    if (part != task->parts.end() && !part->second.done && part->second.acknowledged &&
        held.count(task_id) == 0) {
      lost.push_back(task_id);
    }
  }
  for (const uint64_t task_id : lost) {
    Task& task = *cluster_->tasks.at(task_id);
    BlameLostAgent(task, absl::StrCat("agent ", agent_id, " no longer holds it"));
    StopTask(task, task.flags.failure, 0);
    EndPart(task, agent_id);
  }
}

void Orchestrator::AcknowledgeReport(const std::string& agent_id, const DecodedControl& message) {
  // An older agent keeps no report to send again, and would take the Ack for another message's.
  if (message.version.minor < kControlMinorWithAcknowledgedReports) return;
  outbox_.Send(agent_id, Ack{}, message.header.message_id);
}

void Orchestrator::OnTaskStatus(const std::string& agent_id, const TaskStatus& status) {
  Task* task = FindTask(status.task_id);
  if (task == nullptr) return;
  auto found = task->parts.find(agent_id);
  if (found == task->parts.end() || found->second.done) return;
  found->second.state = status.state;
  if (status.state == TaskState::kStopping) {
    task->state = TaskRowState::kStopping;
    return;
  }
  bool all_running = true;
  for (const auto& [id, part] : task->parts) {
    all_running = all_running && part.state == TaskState::kRunning;
  }
  if (all_running && task->state == TaskRowState::kStarting) {
    task->state = TaskRowState::kRunning;
    task->flags.reached_running = true;
  }
}

void Orchestrator::OnTaskExit(const std::string& agent_id, uint64_t message_id,
                              const TaskExit& exit) {
  outbox_.Send(agent_id, Ack{}, message_id);
  if (ReleaseLeftover(*cluster_->agents.at(agent_id), exit)) return;
  Task* task = FindTask(exit.task_id);
  if (task == nullptr) return;
  auto found = task->parts.find(agent_id);
  if (found == task->parts.end() || found->second.done) return;
  AgentPart& part = found->second;
  part.exits[exit.rank] = exit;
  // A rank that ended outside Cohort, or failed on its own, is the cause; its peers' errors are
  // consequences that may reach the orchestrator first.
  if (ExitFailed(exit) && task->flags.failure.empty() && !task->flags.stopping) {
    Blame(*task, DescribeExit(exit), BlameOf(exit));
    // The ranks elsewhere could only wait for this one.
    StopTask(*task, absl::StrCat("another rank failed: ", task->flags.failure),
             kFailedPeerGraceSeconds);
  } else if (ExitFailed(exit) && !task->flags.failure.empty()) {
    Blame(*task, DescribeExit(exit), BlameOf(exit));
  }
  bool part_done = part.exits.count(kWholeTask) > 0;
  if (!part_done) {
    part_done = true;
    for (const int32_t rank : part.ranks) part_done = part_done && part.exits.count(rank) > 0;
  }
  if (part_done) EndPart(*task, agent_id);
}

void Orchestrator::OnHeartbeat(const std::string& agent_id, const AgentHeartbeat& beat) {
  for (const TaskGpuReadings& readings : beat.task_gpus) {
    Task* task = FindTask(readings.task_id);
    if (task == nullptr) continue;
    auto part = task->parts.find(agent_id);
    if (part != task->parts.end()) part->second.gpus = readings.gpus;
  }
  if (beat.departing) OnDeparting(*cluster_->agents.at(agent_id), beat);
}

void Orchestrator::OnDeparting(Agent& agent, const AgentHeartbeat& beat) {
  if (!agent.connected) return;
  // `busy` holds the slots of every task part there not yet ended, and of leftover ranks.
  if (!beat.running_task_ids.empty() || !agent.busy.empty()) {
    if (!agent.draining) {
      Notice(absl::StrCat("agent ", agent.id,
                          " is shutting down: it stops its tasks, and no new task goes there"));
    }
    agent.draining = true;
    return;
  }
  agent.connected = false;
  Notice(absl::StrCat("agent ", agent.id, " left: it shut down, running no task"));
}

void Orchestrator::OnProgress(const TaskProgress& progress) {
  Task* task = FindTask(progress.task_id);
  if (task == nullptr) return;
  Trial& trial = *cluster_->trials.at(task->trial_id);
  trial.batches_trained = std::max(trial.batches_trained, progress.progress.batches);
  trial.records_trained = progress.progress.records;
  cluster_->experiments.at(trial.experiment_id)->dirty = true;
}

void Orchestrator::OnLogBatch(const LogBatch& batch) {
  Task* task = FindTask(batch.task_id);
  if (task == nullptr) return;
  Trial& trial = *cluster_->trials.at(task->trial_id);
  const Experiment& experiment = *cluster_->experiments.at(trial.experiment_id);
  std::string text;
  for (const LogLine& line : batch.lines) {
    if (line.stream == LogStream::kAgent) {
      LogLine shown = line;  // `cohort trial logs` shows it among the rank's stderr
      shown.stream = LogStream::kStderr;
      shown.text = absl::StrCat("[agent] ", line.text);
      trial.log.Append(task->attempt, shown);
      // The agent's own word about the trial (a rank gone silent): worth telling whoever follows.
      // log.txt keeps it under the rank it is about, as `cohort trial logs` shows it.
      absl::StrAppend(&text, text.empty() ? "" : "\n", "[rank ", line.rank, "] ", shown.text);
      Notice(absl::StrCat("trial ", trial.id, ": ", line.text));
    } else {
      trial.log.Append(task->attempt, line);
      absl::StrAppend(&text, text.empty() ? "" : "\n", "[rank ", line.rank, "] ", line.text);
      // A worker's own warning (a hyperparameter nothing read) or a plugin's warning or error is
      // told like the agent's word, up to kToldLogLines a trial (a plugin may log one a batch).
      if (absl::StartsWith(line.text, "warning: ") || absl::StartsWith(line.text, "error: ")) {
        if (task->told_log_lines < kToldLogLines) {
          Notice(absl::StrCat("trial ", trial.id, ": rank ", line.rank, " ", line.text));
        } else if (task->told_log_lines == kToldLogLines) {
          Notice(absl::StrCat("trial ", trial.id, ": more warnings and errors than ", kToldLogLines,
                              " in this attempt are in its log only"));
        }
        ++task->told_log_lines;
      }
    }
  }
  if (text.empty()) return;
  if (absl::Status appended = AppendLine(experiment.folder->log_path(trial.id), text);
      !appended.ok()) {
    Notice(absl::StrCat("warning: ", appended.message()));
  }
}

void Orchestrator::OnAnswer(const std::string& agent_id, uint64_t correlation_id,
                            const ErrorReply* error) {
  for (auto& [task_id, task] : cluster_->tasks) {
    auto found = task->parts.find(agent_id);
    if (found == task->parts.end() || found->second.start_message_id != correlation_id) continue;
    AgentPart& part = found->second;
    Agent& agent = *cluster_->agents.at(agent_id);
    if (error == nullptr || error->code == ControlErrorCode::kDuplicateTask) {
      part.acknowledged = true;  // a duplicate is a StartTask whose Ack was lost
      agent.slot_refusals = 0;
      return;
    }
    // Refused: the part never ran. Busy slots are a disagreement about the agent's state (it
    // still runs a task the orchestrator forgot, or is shutting down), not the trial's fault:
    // placed again, away from that agent for a while.
    if (error->code == ControlErrorCode::kSlotUnavailable) {
      task->flags.agent_lost = true;
      HoldBackAgent(agent, *error);
    }
    if (task->flags.failure.empty()) {
      task->flags.failure = absl::StrCat("agent ", agent_id, " refused the task: ", error->message);
    }
    StopTask(*task, task->flags.failure, 0);
    EndPart(*task, agent_id);
    return;
  }
}

void Orchestrator::HoldBackAgent(Agent& agent, const ErrorReply& refusal) {
  ++agent.slot_refusals;
  const double hold = orchestration::RefusalHoldSeconds(agent.slot_refusals);
  agent.held_until = clock_.MonotonicSeconds() + hold;
  Notice(absl::StrCat("agent ", agent.id, " refused a task for want of slots (", refusal.message,
                      "): no task is placed there for ", hold, " s"));
}

void Orchestrator::ExcuseOwnPause(double seconds) {
  const double now = clock_.MonotonicSeconds();
  for (auto& [id, agent] : cluster_->agents) {
    if (agent->connected) agent->last_seen = std::max(agent->last_seen, now);
  }
  for (auto& [id, task] : cluster_->tasks) task->launched_at = std::max(task->launched_at, now);
  Notice(absl::StrCat("the orchestrator's loop was held up for ", static_cast<int>(seconds),
                      " s (the process stopped, starved of CPU, or busy): what its agents sent "
                      "meanwhile is read now, and their silence is not held against them"));
}

void Orchestrator::LoseAgent(Agent& agent, absl::string_view why) {
  agent.connected = false;
  Notice(absl::StrCat("agent ", agent.id, " lost: ", why));
  std::vector<uint64_t> affected;
  for (const auto& [task_id, task] : cluster_->tasks) {
    auto part = task->parts.find(agent.id);
    if (part != task->parts.end() && !part->second.done) affected.push_back(task_id);
  }
  for (const uint64_t task_id : affected) {
    Task& task = *cluster_->tasks.at(task_id);
    BlameLostAgent(task,
                   absl::StrCat("agent ", agent.id, " was lost", RanksLostWith(task, agent.id)));
    task.parts.at(agent.id).lost = true;
    StopTask(task, task.flags.failure, 0);
    EndPart(task, agent.id);
  }
  agent.busy.clear();
  agent.leftover_ranks.clear();
}

bool Orchestrator::ReleaseLeftover(Agent& agent, const TaskExit& exit) {
  auto leftover = agent.leftover_ranks.find(exit.task_id);
  if (leftover == agent.leftover_ranks.end()) return false;
  leftover->second.erase(exit.rank);
  if (leftover->second.empty() || exit.rank == kWholeTask) {
    agent.leftover_ranks.erase(leftover);
    std::erase_if(agent.busy,
                  [&](const auto& entry) { return entry.second.task_id == exit.task_id; });
  }
  return true;
}

}  // namespace cohort
