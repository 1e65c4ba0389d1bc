// TrialLifecycle: where one trial stands in the orchestrator, as an explicit state machine. The
// orchestrator turns what happens (a searcher's op, a task created, placed or ended, a kill) into
// the events below; each event names the stages it applies in, and is ignored (returning false,
// the stage unchanged) in any other.
//
//            Train             TaskCreated           TaskLaunched
//   kIdle ----------> kWaiting -----------> kQueued -------------> kRunning
//     ^                  ^                                          |  |  |
//     |                  +--- TaskEnded(kRestart, kPlaceAgain) -----+  |  |
//     +-------------------------- TaskEnded(kSegmentDone) -------------+  |
//                                                       Close: kClosing   | Stop: kStopping
//
// Replayed (a resumed experiment's searcher hears a recorded validation again) takes kWaiting back
// to kIdle without a task.
// Pause (its experiment was paused) sends a queued trial back to kWaiting (its experiment creates
// no task while paused); one with a placed task goes to kPausing, and its task's end decides as
// from kRunning (TrialNext::kPause: back to kWaiting, to go on from its latest checkpoint).
// Close (the searcher is done with the trial) completes a trial without a placed task at once;
// one with a placed task goes to kClosing and completes when that task ends, whatever its end.
// Stop (its experiment was killed) stops a trial without a placed task at once; one with a placed
// task goes to kStopping and stops when the task ends (a closing trial still completes). End
// ends a trial in any stage that is not an end (a failure for good, a trial that cannot resume,
// an experiment that ends).
//
// Thread-safety: a plain value.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LIFECYCLE_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LIFECYCLE_H_

#include <cstdint>

#include "runtime/client/client_messages.h"
#include "runtime/orchestrator/task_ending.h"

namespace cohort {

enum class TrialStage : uint8_t {
  kIdle,       // trained what it was asked (or nothing yet): waits for the searcher
  kWaiting,    // has training to do and no task: one is created within max_concurrent_trials
  kQueued,     // its task waits for slots
  kRunning,    // its task is placed on agents
  kPausing,    // its experiment was paused while its task is placed: waits when the task ends
  kClosing,    // closed by the searcher while its task is placed: completes when it ends
  kStopping,   // its experiment was killed while its task is placed: stops when it ends
  kCompleted,  // ended: closed by the searcher
  kStopped,    // ended: its experiment was killed or ended first
  kError,      // ended: failed for good
};

// "idle", "waiting", ...: for messages and tests.
const char* TrialStageName(TrialStage stage);

class TrialLifecycle {
 public:
  TrialStage stage() const { return stage_; }
  // As clients see it: QUEUED while waiting or queued, RUNNING while a task is placed (pausing,
  // closing and stopping included), PAUSED when idle, and the end.
  TrialState state() const;
  bool ended() const;
  // It has training to do and no task (kWaiting).
  bool wants_task() const { return stage_ == TrialStage::kWaiting; }
  // Whether its task's end ends it: the searcher closed it, or its experiment was killed.
  bool closing() const { return stage_ == TrialStage::kClosing; }
  bool stopping() const { return stage_ == TrialStage::kStopping; }
  bool pausing() const { return stage_ == TrialStage::kPausing; }

  // A TrainTrial: kIdle -> kWaiting. (kWaiting stays: the newer target counts.)
  bool Train();
  // A resumed experiment's searcher heard again that the trial validated its target (a recorded
  // SearcherEvent): kWaiting -> kIdle, as its task's kSegmentDone end would, with no task.
  bool Replayed();
  // Its task was created: kWaiting -> kQueued.
  bool TaskCreated();
  // Its task was placed: kQueued -> kRunning.
  bool TaskLaunched();
  // Its placed task ended on every agent and `decision` (NextForTrial) says what next. From
  // kRunning and kPausing: kSegmentDone -> kIdle; kRestart, kPlaceAgain, kPause -> kWaiting;
  // kEnd -> its end_state; kFail -> kError. From kClosing -> kCompleted, from kStopping ->
  // kStopped, whatever the decision.
  bool TaskEnded(const TrialDecision& decision);
  // Its experiment was paused: kQueued -> kWaiting (the caller drops the queued task); kRunning
  // -> kPausing (the caller stops the task).
  bool Pause();
  // The searcher closed it: kIdle, kWaiting, kQueued -> kCompleted (the caller drops a queued
  // task); kRunning, kPausing, kStopping -> kClosing (the caller stops the task).
  bool Close();
  // Its experiment or the trial itself was killed: kIdle, kWaiting, kQueued -> kStopped (the
  // caller drops a queued task); kRunning, kPausing -> kStopping (the caller stops the task).
  bool Stop();
  // Ends it in `end` (kCompleted, kStopped or kError) from any stage that is not an end.
  bool End(TrialState end);

 private:
  TrialStage stage_ = TrialStage::kIdle;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TRIAL_LIFECYCLE_H_
