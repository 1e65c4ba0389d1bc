// Clock: where the runtime reads time (the trial loop, the orchestrator, the rendezvous), behind an
// interface so tests can drive it.
// Thread-safety: implementations must be safe to call from any thread.
#ifndef COHORT_RUNTIME_BASE_CLOCK_H_
#define COHORT_RUNTIME_BASE_CLOCK_H_

namespace cohort {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch (wall time, for reports).
  virtual double UnixSeconds() = 0;
  // Seconds from an arbitrary origin that never goes backwards (for rates and intervals).
  virtual double MonotonicSeconds() = 0;
};

// The process's real clock; lives for the whole program.
Clock& SystemClock();

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_CLOCK_H_
