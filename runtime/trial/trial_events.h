// TrialEvents: how a running trial tells the outside world what it did. The worker forwards these
// to its supervisor over the control channel; tests record them.
//
// Thread-safety: called only from the thread that runs the trial.
#ifndef COHORT_RUNTIME_TRIAL_TRIAL_EVENTS_H_
#define COHORT_RUNTIME_TRIAL_TRIAL_EVENTS_H_

#include <cstdio>
#include <string>

#include "runtime/control/worker_messages.h"

namespace cohort {

class TrialEvents {
 public:
  virtual ~TrialEvents() = default;
  // Training metrics every scheduling_unit batches, validation metrics after each validation.
  virtual void OnMetrics(const MetricsReport& report) = 0;
  // A few times a second while training.
  virtual void OnProgress(const ProgressReport& report) = 0;
  // After a checkpoint is whole in storage.
  virtual void OnCheckpoint(const CheckpointReport& report) = 0;
  // Asked after every optimizer step; true makes the trial checkpoint and return kStopped.
  virtual bool StopRequested() = 0;
  // Called after each batch of a validation pass, which asks nothing else for as long as it
  // lasts: the loop is moving (the worker may send a heartbeat). The default does nothing.
  virtual void StillWorking() {}
  // A line for the trial's log about something the user should know (a skipped step). The
  // default writes it to stderr, which the worker's supervisor keeps as the rank's log.
  virtual void OnNotice(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_TRIAL_EVENTS_H_
