// The people-facing half of client_messages.h: message names, their direction and the words the
// CLI prints for states.
#include <iterator>

#include "runtime/client/client_messages.h"

namespace cohort {
namespace {

struct MessageKind {
  absl::string_view name;
  bool is_request;
};

// In the order of the ClientMessage variant (and of the schema's union).
constexpr MessageKind kMessageKinds[] = {
    {"SubmitExperiment", true},   {"ListExperiments", true},
    {"DescribeExperiment", true}, {"KillExperiment", true},
    {"ListTasks", true},          {"ListAgents", true},
    {"TrialLogsRequest", true},   {"ExperimentSubmitted", false},
    {"ExperimentList", false},    {"ExperimentDescription", false},
    {"TaskListing", false},       {"AgentTable", false},
    {"TrialLogs", false},         {"ClientAck", false},
    {"ClientError", false},       {"ChangeExperiment", true},
    {"KillTrial", true},          {"DescribeTrial", true},
    {"ListCheckpoints", true},    {"TrialDescription", false},
    {"CheckpointListing", false}, {"DiagnoseTrial", true},
    {"TrialDiagnosis", false},
};
static_assert(std::size(kMessageKinds) == std::variant_size_v<ClientMessage>);

}  // namespace

bool IsClientRequest(const ClientMessage& message) {
  return kMessageKinds[message.index()].is_request;
}

absl::string_view ClientMessageName(const ClientMessage& message) {
  return kMessageKinds[message.index()].name;
}

absl::string_view ExperimentStateName(ExperimentState state) {
  switch (state) {
    case ExperimentState::kActive:
      return "active";
    case ExperimentState::kStopping:
      return "stopping";
    case ExperimentState::kCompleted:
      return "completed";
    case ExperimentState::kStopped:
      return "stopped";
    case ExperimentState::kError:
      return "error";
    case ExperimentState::kPaused:
      return "paused";
  }
  return "unknown";
}

bool ExperimentEnded(ExperimentState state) {
  return state == ExperimentState::kCompleted || state == ExperimentState::kStopped ||
         state == ExperimentState::kError;
}

bool TrialEnded(TrialState state) {
  return state == TrialState::kCompleted || state == TrialState::kStopped ||
         state == TrialState::kError;
}

absl::string_view ExperimentChangeName(ExperimentChangeKind change) {
  switch (change) {
    case ExperimentChangeKind::kPause:
      return "pause";
    case ExperimentChangeKind::kActivate:
      return "activate";
    case ExperimentChangeKind::kArchive:
      return "archive";
    case ExperimentChangeKind::kUnarchive:
      return "unarchive";
    case ExperimentChangeKind::kDelete:
      return "delete";
  }
  return "unknown";
}

void AdaptReplyForClientMinor(uint16_t minor, ClientMessage& reply) {
  if (minor >= 4) return;
  auto adapt = [](ExperimentSummary& summary) {
    if (summary.state == ExperimentState::kPaused) summary.state = ExperimentState::kActive;
  };
  if (auto* list = std::get_if<ExperimentList>(&reply)) {
    for (ExperimentSummary& summary : list->experiments) adapt(summary);
  } else if (auto* description = std::get_if<ExperimentDescription>(&reply)) {
    adapt(description->summary);
  }
}

absl::string_view TrialStateName(TrialState state) {
  switch (state) {
    case TrialState::kQueued:
      return "queued";
    case TrialState::kRunning:
      return "running";
    case TrialState::kPaused:
      return "paused";
    case TrialState::kCompleted:
      return "completed";
    case TrialState::kStopped:
      return "stopped";
    case TrialState::kError:
      return "error";
  }
  return "unknown";
}

absl::string_view TaskRowStateName(TaskRowState state) {
  switch (state) {
    case TaskRowState::kQueued:
      return "queued";
    case TaskRowState::kStarting:
      return "starting";
    case TaskRowState::kRunning:
      return "running";
    case TaskRowState::kStopping:
      return "stopping";
  }
  return "unknown";
}

absl::string_view CheckpointConditionName(CheckpointCondition condition) {
  switch (condition) {
    case CheckpointCondition::kUnchecked:
      return "-";
    case CheckpointCondition::kWhole:
      return "whole";
    case CheckpointCondition::kDamaged:
      return "damaged";
    case CheckpointCondition::kMissing:
      return "missing";
  }
  return "unknown";
}

}  // namespace cohort
