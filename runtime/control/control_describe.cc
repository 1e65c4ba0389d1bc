// The log-facing half of control_messages.h: names and one-line descriptions of messages.
#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "runtime/control/control_messages.h"

namespace cohort {
namespace {

std::string Count(size_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// "rank 3", "ranks 0-3", "ranks 0-1,4,6-7", "no ranks".
std::string Ranks(std::vector<uint32_t> ranks) {
  if (ranks.empty()) return "no ranks";
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t first = 0; first < ranks.size();) {
    size_t last = first;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    absl::StrAppend(&text, first == 0 ? "" : ",", ranks[first]);
    if (last > first) absl::StrAppend(&text, "-", ranks[last]);
    first = last + 1;
  }
  return text;
}

absl::string_view ErrorCodeName(ControlErrorCode code) {
  switch (code) {
    case ControlErrorCode::kUnspecified:
      return "error";
    case ControlErrorCode::kUnsupportedVersion:
      return "unsupported version";
    case ControlErrorCode::kNotRegistered:
      return "not registered";
    case ControlErrorCode::kUnknownTask:
      return "unknown task";
    case ControlErrorCode::kDuplicateTask:
      return "duplicate task";
    case ControlErrorCode::kSlotUnavailable:
      return "slot unavailable";
    case ControlErrorCode::kInvalidRequest:
      return "invalid request";
  }
  return "error";
}

struct Describer {
  std::string operator()(const AgentHello& m) const {
    return absl::StrCat("AgentHello agent ", m.agent_id, " on ", m.hostname, ": ",
                        Count(m.slots.size(), "slot"), ", ", Count(m.tasks.size(), "task"));
  }
  std::string operator()(const AgentHeartbeat& m) const {
    return absl::StrCat("AgentHeartbeat agent ", m.agent_id, ": ", m.busy_slots, " busy, ",
                        Count(m.running_task_ids.size(), "running task"));
  }
  std::string operator()(const StartTask& m) const {
    std::vector<uint32_t> ranks;
    for (const RankAssignment& rank : m.ranks) ranks.push_back(rank.rank);
    return absl::StrCat("StartTask task ", m.task_id, " trial ", m.trial_id, " ",
                        Ranks(std::move(ranks)));
  }
  std::string operator()(const KillTask& m) const {
    return absl::StrCat("KillTask task ", m.task_id, " grace ", m.grace_seconds, " s");
  }
  std::string operator()(const TaskStatus& m) const {
    return absl::StrCat("TaskStatus task ", m.task_id, " ", TaskStateName(m.state));
  }
  std::string operator()(const TaskExit& m) const {
    std::string text = absl::StrCat("TaskExit task ", m.task_id);
    if (m.rank == kWholeTask) {
      absl::StrAppend(&text, " as a whole");
    } else {
      absl::StrAppend(&text, " rank ", m.rank);
    }
    if (m.signal != 0) {
      absl::StrAppend(&text, " signal ", m.signal);
    } else {
      absl::StrAppend(&text, " exit code ", m.exit_code);
    }
    if (m.killed_by_agent) absl::StrAppend(&text, ", killed by the agent");
    if (m.stopped) absl::StrAppend(&text, ", stopped before");
    if (m.unfinished) absl::StrAppend(&text, ", trial unfinished");
    return text;
  }
  std::string operator()(const TaskMetricsReport& m) const {
    const MetricsReport& r = m.report;
    return absl::StrCat("TaskMetricsReport task ", m.task_id, " trial ", r.trial_id, " ",
                        r.kind == ReportKind::kValidation ? "validation" : "training", " after ",
                        r.batches, " batches: ", Count(r.metrics.size(), "metric"));
  }
  std::string operator()(const TaskCheckpointReport& m) const {
    const std::string what = m.checkpoint_id.empty()
                                 ? std::string(" its start")
                                 : absl::StrCat(" checkpoint ", m.checkpoint_id);
    return absl::StrCat("TaskCheckpointReport task ", m.task_id, " trial ", m.trial_id,
                        m.restored ? " restored" : "", what, " after ", m.batches, " batches");
  }
  std::string operator()(const LogBatch& m) const {
    return absl::StrCat("LogBatch task ", m.task_id, ": ", Count(m.lines.size(), "line"));
  }
  std::string operator()(const TaskProgress& m) const {
    return absl::StrCat("TaskProgress task ", m.task_id, " trial ", m.progress.trial_id, " at ",
                        m.progress.batches, " of ", m.progress.total_batches, " batches");
  }
  std::string operator()(const TaskListRequest&) const { return "TaskListRequest"; }
  std::string operator()(const TaskList& m) const {
    return absl::StrCat("TaskList: ", Count(m.tasks.size(), "task"));
  }
  std::string operator()(const Ack&) const { return "Ack"; }
  std::string operator()(const ErrorReply& m) const {
    return absl::StrCat("ErrorReply ", ErrorCodeName(m.code), ": ", m.message);
  }
};

}  // namespace

absl::string_view ControlMessageName(const ControlMessage& message) {
  static constexpr absl::string_view kNames[] = {
      "AgentHello", "AgentHeartbeat",  "StartTask",         "KillTask",
      "TaskStatus", "TaskExit",        "TaskMetricsReport", "TaskCheckpointReport",
      "LogBatch",   "TaskListRequest", "TaskList",          "Ack",
      "ErrorReply", "TaskProgress"};
  static_assert(std::size(kNames) == std::variant_size_v<ControlMessage>);
  return kNames[message.index()];
}

std::string DescribeControlMessage(const ControlMessage& message) {
  return std::visit(Describer{}, message);
}

absl::string_view TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kPending:
      return "pending";
    case TaskState::kStarting:
      return "starting";
    case TaskState::kRunning:
      return "running";
    case TaskState::kStopping:
      return "stopping";
    case TaskState::kExited:
      return "exited";
  }
  return "unknown";
}

}  // namespace cohort
