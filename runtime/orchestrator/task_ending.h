// What the orchestrator decides once a task has ended on every agent: how the task ended, read
// from its parts' exits (TaskEnding), and what its trial does next (NextForTrial): the restart
// policy. Pure functions, so each rule is tested alone.
//
//   TaskEnding ending = EndingOf(task.parts, flags);
//   TrialDecision next = NextForTrial(ending, {.experiment_stopping = false, .closed = false,
//                                             .restarts = trial.restarts,
//                                             .max_restarts = config.max_restarts});
//   switch (next.next) { case TrialNext::kRestart: ... }
//
// Thread-safety: plain values and pure functions.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TASK_ENDING_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TASK_ENDING_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/client/client_messages.h"
#include "runtime/control/control_messages.h"

namespace cohort {

// A process that ended with a non-zero code or by a signal, or without telling how its trial ended
// (a plugin's exit(0) in the middle of training is no success).
inline bool ExitFailed(const TaskExit& exit) {
  return exit.signal != 0 || exit.exit_code != 0 || exit.unfinished;
}

// A process killed by a signal Cohort did not send (a crash, the OOM killer, kill -9), or that its
// agent found stopped (SIGSTOP, a debugger) when it came to kill it: the cause of a task's failure,
// where its peers' errors (a closed connection, a timed-out collective) are consequences.
inline bool EndedOutsideCohort(const TaskExit& exit) {
  return (exit.signal != 0 && !exit.killed_by_agent) || exit.stopped;
}

// How much a rank's exit is the cause of its task's failure, least first: none (it did not fail),
// failed in a collective with the others (kCollectiveFailureExitCode: a peer's closed connection,
// often that peer's own failure seen from here) or killed by a signal its agent sent (as its
// peers failed), failed on its own (its plugin's error, a failure every attempt would meet, an exit
// without finishing), ended outside Cohort (EndedOutsideCohort; an agent lost with its ranks is as
// much a cause). A task's failure names its most-to-blame exit first, whichever came first.
enum class FailureBlame { kNone, kInCollective, kOwn, kOutside };
FailureBlame BlameOf(const TaskExit& exit);

// "was killed by signal 9 (SIGKILL)" (the agent's reason, which names the signal), "exited with
// code 1 (<reason>)".
std::string HowItEnded(const TaskExit& exit);

// A task's ranks on one agent.
struct AgentPart {
  std::vector<uint32_t> slots;
  std::set<int32_t> ranks;        // the trial ranks placed there
  uint64_t start_message_id = 0;  // the StartTask's
  bool acknowledged = false;
  TaskState state = TaskState::kPending;
  std::map<int32_t, TaskExit> exits;  // by rank (kWholeTask for the task as a whole)
  bool done = false;                  // every process there has ended (or the agent was lost)
  bool lost = false;  // its agent was lost first: its ranks without an exit ended with it
  // The agent's GPU readings from its latest heartbeat, when rank 0 runs elsewhere: added to the
  // task's next training report, then cleared.
  std::vector<GpuReading> gpus;
};

// What the orchestrator itself knew of the task as it ended.
struct TaskFlags {
  bool reached_running = false;  // every part said running at some point
  bool stopping = false;         // the orchestrator asked it to stop
  bool agent_lost = false;       // an agent holding part of it was lost or never answered
  // Its batch-system job (agent_provisioner.h) ended before its agents registered.
  bool job_lost = false;
  std::string failure;           // the first failure seen (its cause first)
};

struct TaskEnding {
  bool failed = false;     // a failure was seen, or some process failed
  bool crashed = false;    // a process died of a signal its agent did not send
  bool permanent = false;  // a rank failed as every attempt would (kPermanentFailureExitCode)
  bool reached_running = false;
  bool agent_lost = false;
  bool job_lost = false;
  bool stopped_by_orchestrator = false;  // it asked the task to stop, and nothing failed before
  std::string failure;                   // the first failure seen, cause first
  // "agent node-2 stopped it (<reason>)": an agent stopped its processes cleanly without being
  // asked (it is shutting down, its machine is preempted); empty otherwise.
  std::string stopped_by_agent;
  // The agents that did so: no task goes there until they say hello again.
  std::vector<std::string> draining_agents;
  // The ranks that ended outside Cohort (EndedOutsideCohort), with HowItEnded: what the flight
  // diagnosis names as the likely cause.
  std::map<uint32_t, std::string> ended_outside;
};

// How a task whose parts are `parts` ended.
TaskEnding EndingOf(const std::map<std::string, AgentPart>& parts, const TaskFlags& flags);

// Where the trial stands as its task ends.
struct TrialStanding {
  bool experiment_stopping = false;  // its experiment was killed
  bool closed = false;               // the searcher closed it
  // Its experiment was paused and the task was asked to stop before it validated its target.
  bool pausing = false;
  // An elastic trial's task was asked to stop to grow back to more slots, before it validated its
  // target.
  bool regrowing = false;
  uint32_t restarts = 0;             // restarts used so far
  uint32_t max_restarts = 0;
};

enum class TrialNext {
  kEnd,          // ends in `end_state`: closed by the searcher (kCompleted) or its experiment
                 // stopping (kStopped), however the task ended
  kPlaceAgain,   // not its fault (an agent lost or stopping) or growing back to more slots: again
                 // from its latest checkpoint, using no restart; `reason` says what happened
  kPause,        // stopped for its experiment's pause, nothing failed: it goes on from its latest
                 // checkpoint when the experiment is activated, using no restart
  kSegmentDone,  // trained to its target: the validation goes to the searcher
  kRestart,      // failed, and may restart: again from its latest checkpoint; `reason` is why
  kFail,         // failed for good; `reason` is why
};

struct TrialDecision {
  TrialNext next = TrialNext::kSegmentDone;
  TrialState end_state = TrialState::kCompleted;  // for kEnd
  std::string reason;
  // For kFail, why the failure is not restarted: "it failed before its workers started training
  // (...)", "max_restarts is 0", "its 5 restarts (max_restarts) are used"; empty when `reason`
  // says so already (a failure every attempt would meet).
  std::string not_restarted;
};

// The restart policy. A failure restarts the trial, within max_restarts, when its task had
// reached running, a process crashed or its job was lost before it started; one before every
// worker started (a plugin that does not load) or one a rank says every attempt would meet would
// only happen again, and ends the trial.
TrialDecision NextForTrial(const TaskEnding& ending, const TrialStanding& trial);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TASK_ENDING_H_
