#include "runtime/orchestrator/trial_lifecycle.h"

namespace cohort {

const char* TrialStageName(TrialStage stage) {
  switch (stage) {
    case TrialStage::kIdle:
      return "idle";
    case TrialStage::kWaiting:
      return "waiting";
    case TrialStage::kQueued:
      return "queued";
    case TrialStage::kRunning:
      return "running";
    case TrialStage::kPausing:
      return "pausing";
    case TrialStage::kClosing:
      return "closing";
    case TrialStage::kStopping:
      return "stopping";
    case TrialStage::kCompleted:
      return "completed";
    case TrialStage::kStopped:
      return "stopped";
    case TrialStage::kError:
      return "error";
  }
  return "unknown";
}

TrialState TrialLifecycle::state() const {
  switch (stage_) {
    case TrialStage::kIdle:
      return TrialState::kPaused;
    case TrialStage::kWaiting:
    case TrialStage::kQueued:
      return TrialState::kQueued;
    case TrialStage::kRunning:
    case TrialStage::kPausing:
    case TrialStage::kClosing:
    case TrialStage::kStopping:
      return TrialState::kRunning;
    case TrialStage::kCompleted:
      return TrialState::kCompleted;
    case TrialStage::kStopped:
      return TrialState::kStopped;
    case TrialStage::kError:
      return TrialState::kError;
  }
  return TrialState::kError;
}

bool TrialLifecycle::ended() const {
  return stage_ == TrialStage::kCompleted || stage_ == TrialStage::kStopped ||
         stage_ == TrialStage::kError;
}

bool TrialLifecycle::Train() {
  if (stage_ != TrialStage::kIdle && stage_ != TrialStage::kWaiting) return false;
  stage_ = TrialStage::kWaiting;
  return true;
}

bool TrialLifecycle::Replayed() {
  if (stage_ != TrialStage::kWaiting) return false;
  stage_ = TrialStage::kIdle;
  return true;
}

bool TrialLifecycle::TaskCreated() {
  if (stage_ != TrialStage::kWaiting) return false;
  stage_ = TrialStage::kQueued;
  return true;
}

bool TrialLifecycle::TaskLaunched() {
  if (stage_ != TrialStage::kQueued) return false;
  stage_ = TrialStage::kRunning;
  return true;
}

bool TrialLifecycle::TaskEnded(const TrialDecision& decision) {
  switch (stage_) {
    case TrialStage::kClosing:
      stage_ = TrialStage::kCompleted;
      return true;
    case TrialStage::kStopping:
      stage_ = TrialStage::kStopped;
      return true;
    case TrialStage::kRunning:
    case TrialStage::kPausing:
      break;
    default:
      return false;
  }
  switch (decision.next) {
    case TrialNext::kSegmentDone:
      stage_ = TrialStage::kIdle;
      return true;
    case TrialNext::kRestart:
    case TrialNext::kPlaceAgain:
    case TrialNext::kPause:
      stage_ = TrialStage::kWaiting;
      return true;
    case TrialNext::kEnd:
      return End(decision.end_state);
    case TrialNext::kFail:
      return End(TrialState::kError);
  }
  return false;
}

bool TrialLifecycle::Pause() {
  switch (stage_) {
    case TrialStage::kQueued:
      stage_ = TrialStage::kWaiting;
      return true;
    case TrialStage::kRunning:
      stage_ = TrialStage::kPausing;
      return true;
    default:
      return false;
  }
}

bool TrialLifecycle::Close() {
  switch (stage_) {
    case TrialStage::kIdle:
    case TrialStage::kWaiting:
    case TrialStage::kQueued:
      stage_ = TrialStage::kCompleted;
      return true;
    case TrialStage::kRunning:
    case TrialStage::kPausing:
    case TrialStage::kStopping:
      stage_ = TrialStage::kClosing;
      return true;
    default:
      return false;
  }
}

bool TrialLifecycle::Stop() {
  switch (stage_) {
    case TrialStage::kIdle:
    case TrialStage::kWaiting:
    case TrialStage::kQueued:
      stage_ = TrialStage::kStopped;
      return true;
    case TrialStage::kRunning:
    case TrialStage::kPausing:
      stage_ = TrialStage::kStopping;
      return true;
    default:
      return false;
  }
}

bool TrialLifecycle::End(TrialState end) {
  if (ended()) return false;
  switch (end) {
    case TrialState::kCompleted:
      stage_ = TrialStage::kCompleted;
      return true;
    case TrialState::kStopped:
      stage_ = TrialStage::kStopped;
      return true;
    case TrialState::kError:
      stage_ = TrialStage::kError;
      return true;
    default:
      return false;
  }
}

}  // namespace cohort
