// PhaseBoard: where a rank's training thread is (inside the plugin, waiting for the exchange,
// writing a checkpoint, ...) and since when, written by TrialRunner and read by a watchdog on
// another thread, so a rank that stops taking part can say where it stopped even though its
// training thread is stuck.
//
//   PhaseBoard board;                                   // TrialRunnerOptions::phases = &board
//   PhaseBoard::Snapshot now = board.Read();            // from any thread
//   std::printf("%s at batch %llu\n", PhaseName(now.phase), now.batch);
//
// Thread-safety: Enter from the training thread, Read from any thread.
#ifndef COHORT_RUNTIME_TRIAL_TRIAL_PHASE_H_
#define COHORT_RUNTIME_TRIAL_TRIAL_PHASE_H_

#include <cstdint>
#include <mutex>

namespace cohort {

enum class TrialPhase {
  kStarting,       // forming the group, agreeing on the parameters
  kPreparing,      // choosing the batch's records
  kTraining,       // inside the plugin's train_batch
  kExchanging,     // waiting for the rest of the gradient exchange
  kStepping,       // the optimizer step
  kReporting,      // merging training metrics, agreeing on a stop
  kValidating,     // inside the plugin's evaluate_batch, and merging validation metrics
  kCheckpointing,  // copying the state for a checkpoint (and writing it, unless in the background)
  kDone,
};

// "inside the plugin's train_batch", "waiting for the gradient exchange", ...
const char* TrialPhaseName(TrialPhase phase);

// The phase's key in a training report's timings (metrics.jsonl): "data", "compute",
// "exchange_wait", "optimizer", "metrics", "validation", "checkpoint"; "" for kStarting and
// kDone, which no report counts.
const char* TrialPhaseTimingKey(TrialPhase phase);

// Whether a rank in `phase` is doing its own work (the plugin, storage) rather than waiting for
// the other ranks: a rank that stays long in such a phase is the one the others wait for.
bool IsOwnWork(TrialPhase phase);

class PhaseBoard {
 public:
  struct Snapshot {
    TrialPhase phase = TrialPhase::kStarting;
    uint64_t batch = 0;  // the batch it belongs to (from 1), or the batches trained
    double since = 0;    // Clock::MonotonicSeconds() when it was entered
  };

  void Enter(TrialPhase phase, uint64_t batch, double now) {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = {phase, batch, now};
  }
  Snapshot Read() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }

 private:
  mutable std::mutex mutex_;
  Snapshot current_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_TRIAL_PHASE_H_
