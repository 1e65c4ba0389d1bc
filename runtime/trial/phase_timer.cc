#include "runtime/trial/phase_timer.h"

namespace cohort {

void PhaseTimer::Close(double now) {
  if (started_ && TrialPhaseTimingKey(current_)[0] != '\0' && now > since_) {
    seconds_[current_] += now - since_;
  }
  since_ = now;
}

void PhaseTimer::Enter(TrialPhase phase, double now) {
  Close(now);
  current_ = phase;
  started_ = true;
}

std::vector<NamedValue> PhaseTimer::Take(double now) {
  Close(now);
  std::vector<NamedValue> timings;
  for (const auto& [phase, seconds] : seconds_) {
    timings.push_back({TrialPhaseTimingKey(phase), seconds});
  }
  seconds_.clear();
  return timings;
}

}  // namespace cohort
