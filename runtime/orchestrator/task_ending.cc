#include "runtime/orchestrator/task_ending.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {

FailureBlame BlameOf(const TaskExit& exit) {
  if (EndedOutsideCohort(exit)) return FailureBlame::kOutside;
  if (!ExitFailed(exit)) return FailureBlame::kNone;
  // Signalled as its peers failed and ended by the signal; one that exited with a code of its
  // own meanwhile failed as that code says (its own error came before the signal).
  if (exit.killed_by_agent && exit.signal != 0) return FailureBlame::kInCollective;
  const bool in_collective =
      exit.signal == 0 && !exit.unfinished && exit.exit_code == kCollectiveFailureExitCode;
  return in_collective ? FailureBlame::kInCollective : FailureBlame::kOwn;
}

std::string HowItEnded(const TaskExit& exit) {
  // An agent's reason for a signal names it already ("killed by signal 9 (SIGKILL)").
  if (exit.signal != 0 && absl::StartsWith(exit.reason, "killed ")) {
    return absl::StrCat("was ", exit.reason);
  }
  std::string how = exit.signal != 0 ? absl::StrCat("was killed by signal ", exit.signal)
                                     : absl::StrCat("exited with code ", exit.exit_code);
  if (!exit.reason.empty()) absl::StrAppend(&how, " (", exit.reason, ")");
  return how;
}

TaskEnding EndingOf(const std::map<std::string, AgentPart>& parts, const TaskFlags& flags) {
  TaskEnding ending;
  ending.failed = !flags.failure.empty();
  for (const auto& [agent_id, part] : parts) {
    bool draining = false;
    for (const auto& [rank, exit] : part.exits) {
      ending.failed = ending.failed || ExitFailed(exit);
      ending.crashed = ending.crashed || (exit.signal != 0 && !exit.killed_by_agent);
      if (rank != kWholeTask && EndedOutsideCohort(exit)) {
        ending.ended_outside[static_cast<uint32_t>(rank)] = HowItEnded(exit);
      }
      // Only a worker that told how its trial failed means its exit code: a plugin's own exit(3)
      // is no permanent failure.
      ending.permanent = ending.permanent || (exit.signal == 0 && !exit.unfinished &&
                                              exit.exit_code == kPermanentFailureExitCode);
      if (exit.killed_by_agent && !ExitFailed(exit) && !flags.stopping) {
        if (ending.stopped_by_agent.empty()) {
          ending.stopped_by_agent =
              absl::StrCat("agent ", agent_id, " stopped it (", exit.reason, ")");
        }
        draining = true;
      }
    }
    if (draining) ending.draining_agents.push_back(agent_id);
    // A lost agent's ranks ended with it, unseen: as much a cause as a rank killed outside Cohort.
    for (const int32_t rank : part.ranks) {
      if (part.lost && rank != kWholeTask && part.exits.count(rank) == 0) {
        ending.ended_outside[static_cast<uint32_t>(rank)] =
            absl::StrCat("ended with its agent ", agent_id, " (lost)");
      }
    }
  }
  ending.reached_running = flags.reached_running;
  ending.agent_lost = flags.agent_lost;
  ending.job_lost = flags.job_lost;
  ending.stopped_by_orchestrator = flags.stopping && flags.failure.empty();
  ending.failure = flags.failure;
  return ending;
}

TrialDecision NextForTrial(const TaskEnding& ending, const TrialStanding& trial) {
  TrialDecision decision;
  if (trial.closed || trial.experiment_stopping) {
    // The searcher is done with it, or its experiment was killed: however its task ended, it is
    // not trained again.
    decision.next = TrialNext::kEnd;
    decision.end_state = trial.closed ? TrialState::kCompleted : TrialState::kStopped;
    return decision;
  }
  if (ending.agent_lost || (!ending.failed && !ending.stopped_by_agent.empty())) {
    decision.next = TrialNext::kPlaceAgain;
    decision.reason = ending.agent_lost ? ending.failure : ending.stopped_by_agent;
    return decision;
  }
  if (!ending.failed) {
    decision.next = trial.pausing     ? TrialNext::kPause
                    : trial.regrowing ? TrialNext::kPlaceAgain
                                      : TrialNext::kSegmentDone;
    if (decision.next == TrialNext::kPlaceAgain) {
      decision.reason = "stopped after a checkpoint to grow back to more slots";
    }
    return decision;
  }
  decision.reason = ending.failure.empty() ? "a worker failed" : ending.failure;
  if (ending.permanent) {
    absl::StrAppend(&decision.reason, " (every attempt would fail the same way: not restarted)");
  }
  const bool before_training = !(ending.reached_running || ending.crashed || ending.job_lost);
  const bool may_restart =
      !ending.permanent && !before_training && trial.restarts < trial.max_restarts;
  decision.next = may_restart ? TrialNext::kRestart : TrialNext::kFail;
  if (may_restart || ending.permanent) return decision;
  if (before_training) {
    decision.not_restarted =
        "it failed before its workers started training, as another attempt would: not restarted";
  } else if (trial.max_restarts == 0) {
    decision.not_restarted = "max_restarts is 0";
  } else {
    decision.not_restarted =
        trial.max_restarts == 1
            ? std::string("its 1 restart (max_restarts) is used")
            : absl::StrCat("its ", trial.max_restarts, " restarts (max_restarts) are used");
  }
  return decision;
}

}  // namespace cohort
