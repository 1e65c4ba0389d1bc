// PhaseTimer: how long the training thread spent in each TrialPhase between two training
// reports, for the report's timings (metrics.jsonl "timings": seconds per phase key, see
// TrialPhaseTimingKey). Phases without a key (starting, done) are not counted.
//
//   timer.Enter(TrialPhase::kTraining, clock.MonotonicSeconds());
//   ...
//   std::vector<NamedValue> timings = timer.Take(clock.MonotonicSeconds());  // then from zero
//
// Thread-safety: one thread (the training thread).
#ifndef COHORT_RUNTIME_TRIAL_PHASE_TIMER_H_
#define COHORT_RUNTIME_TRIAL_PHASE_TIMER_H_

#include <map>
#include <string>
#include <vector>

#include "runtime/control/worker_messages.h"
#include "runtime/trial/trial_phase.h"

namespace cohort {

class PhaseTimer {
 public:
  // The current phase ends at `now` (its time is counted) and `phase` begins.
  void Enter(TrialPhase phase, double now);

  // Seconds per phase key since the last Take, the current phase counted up to `now`, in the
  // order of TrialPhase (only phases that took time); the counts start again from zero.
  std::vector<NamedValue> Take(double now);

  // The phase entered last and when.
  TrialPhase current() const { return current_; }
  double since() const { return since_; }

 private:
  void Close(double now);

  TrialPhase current_ = TrialPhase::kStarting;
  double since_ = 0;
  bool started_ = false;
  std::map<TrialPhase, double> seconds_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_PHASE_TIMER_H_
