// ManualClock: a Clock whose time moves only when a test (or fuzz target) says so.
#ifndef COHORT_TEST_COMMON_MANUAL_CLOCK_H_
#define COHORT_TEST_COMMON_MANUAL_CLOCK_H_

#include "runtime/base/clock.h"

namespace cohort {

class ManualClock final : public Clock {
 public:
  double UnixSeconds() override { return 1.7e9 + now; }
  double MonotonicSeconds() override { return now; }
  void Advance(double seconds) { now += seconds; }

  double now = 100;  // seconds since the monotonic origin; a test may set it
};

}  // namespace cohort

#endif  // COHORT_TEST_COMMON_MANUAL_CLOCK_H_
