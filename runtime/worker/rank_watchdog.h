// RankWatchdog: a worker thread that watches the training thread's PhaseBoard and writes to
// stderr (the rank's trial log) when this rank is the one holding the others up: it has spent
// longer than the collective timeout in its own work (inside the plugin, the optimizer step,
// taking a checkpoint), so the other ranks are about to give up on it; or it was told to stop
// (SIGTERM from its agent) while stuck there. The training thread itself cannot say so: it is
// the one that is stuck.
//
//   RankWatchdog watchdog(rank, board, timeout_seconds, [] { return stop_signal != 0; });
//   ... run the trial ...   // the watchdog stops with its destructor
//
// Thread-safety: its own thread reads the board; construct and destroy on one thread.
#ifndef COHORT_RUNTIME_WORKER_RANK_WATCHDOG_H_
#define COHORT_RUNTIME_WORKER_RANK_WATCHDOG_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "runtime/trial/trial_phase.h"

namespace cohort {

class RankWatchdog {
 public:
  // `stopping` says whether the process was asked to stop; it must be safe to call from the
  // watchdog's thread.
  RankWatchdog(uint32_t rank, const PhaseBoard& board, double timeout_seconds,
               std::function<bool()> stopping);
  ~RankWatchdog();
  RankWatchdog(const RankWatchdog&) = delete;
  RankWatchdog& operator=(const RankWatchdog&) = delete;

 private:
  void Watch();

  const uint32_t rank_;
  const PhaseBoard& board_;
  const double timeout_seconds_;
  const std::function<bool()> stopping_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_WORKER_RANK_WATCHDOG_H_
